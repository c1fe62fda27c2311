/**
 * What a close freezes in its record (\`figures\`): the group's report section of the month, its reconciliation, the
 * revenue rule, the re-read before it and the month's exchange rates. The report of a signed-off month is rendered
 * from these, the build loads them as the close tables, and the consolidated total converts at these rates, whatever
 * the warehouse or the rates file say later.
 */
import type { GroupSection, ReconciliationLine } from './figures.js';
import type { CloseRecord } from './record.js';

/**
 * The exchange rates a close used (PERKS_FX_RATES at the close): the month's rate of each of the group's
 * currencies that had one, into the reporting currency.
 */
export interface FrozenFx {
  /** The rates file's name as given (shown in the report). */
  readonly file: string;
  readonly reporting_currency: string;
  /** currency → rate (exact decimal text); a currency absent here had no rate for the month. */
  readonly rates: Readonly<Record<string, string>>;
}

/** What the re-read of a month's windows just before its close found (\`perks close\`, src/close/reread.ts). */
export interface Reread {
  readonly run_id: string;
  readonly windows: number;
  /** Orders of the month new or changed since they were last landed. */
  readonly changed: number;
}

/** What a close freezes: the group's report section, its reconciliation, and the rule the section used. */
export interface FrozenFigures {
  /** The rates of the month when PERKS_FX_RATES was set at the close; absent otherwise. */
  readonly fx?: FrozenFx;
  readonly revenue_statuses: readonly string[];
  /** The re-read of the month's windows just before the close; null when it was skipped. */
  readonly reread?: Reread | null;
  readonly section: GroupSection;
  readonly reconciliation: {
    readonly available: boolean;
    readonly note?: string;
    readonly lines: readonly ReconciliationLine[];
  };
}

/** The figures a close record froze (a record of a close; a reopen froze none). */
export function frozenFigures(record: CloseRecord): FrozenFigures {
  return record.figures as FrozenFigures;
}

/**
 * Why a forced close was forced, from what it froze: "the month was provisional", "3 credit balances read
 * before the month end", or both joined by "and".
 */
export function forcedBecause(record: CloseRecord): string {
  const section = frozenFigures(record)?.section;
  const reasons: string[] = [];
  if (section?.closure?.status === 'provisional') reasons.push('the month was provisional');
  const stale = Number(section?.credit?.staleBalances ?? 0);
  if (stale > 0) reasons.push(`${stale} credit balance${stale === 1 ? '' : 's'} read before the month end`);
  return reasons.length > 0 ? reasons.join(' and ') : 'the month was provisional';
}
