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

/** One side of the re-read before a close (the lake before it, or the API then) in one currency. */
export interface RereadSide {
  readonly orders: number;
  /** Exact decimal text ("584.14"), under the revenue rule of the close. */
  readonly recognised_revenue: string;
}

/** The group's month in one currency before the re-read and after it, and what moved (src/extract/windows/settled-guard.ts). */
export interface RereadCurrency {
  readonly currency: string;
  readonly before: RereadSide;
  readonly after: RereadSide;
  /** Orders removed, or changed otherwise than by a status out of recognised revenue (a refund, a cancellation). */
  readonly touched: number;
  /** Recognised revenue the removed and changed orders moved, each counted positive. */
  readonly moved: string;
}

/** What the re-read of the group's month just before its close found (\`perks close\`, src/close/reread.ts). */
export interface Reread {
  readonly run_id: string;
  /** The group's windows (local days) re-read; before issue 51, every group's together. */
  readonly windows: number;
  /**
   * Orders of the month changed since they were last landed. Before issue 51 (no `new`, `removed`), the versions
   * the re-read appended to the order history, new, changed and removed together, of every group.
   */
  readonly changed: number;
  readonly new?: number;
  readonly removed?: number;
  readonly currencies?: readonly RereadCurrency[];
  /** The re-read went beyond the settled-change guard and the close applied it as asked (\`--accept-changes\`). */
  readonly accepted_changes?: { readonly breach: string; readonly allowance: string };
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
