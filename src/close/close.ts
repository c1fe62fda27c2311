/**
 * `perks close`, `perks reopen`, `perks closes`: signing a month off per group, undoing a mistake, and the
 * record of both. A close freezes the group's report figures of the month (as `perks report` computes them
 * from the warehouse now) in the record; the report of a closed month is rendered from them ever after.
 */
import { userInfo } from 'node:os';
import {
  appendClose,
  closeKey,
  closesInForce,
  rateOf,
  readCloses,
  type CloseRecord,
  type FrozenFigures,
  type FrozenFx,
  type FxRates,
  type GroupSection,
  type Reread,
} from '../closes/index.js';
import {
  loadReport,
  openWarehouse,
  parseMonth,
  type ReportMonth,
  type RevenueReport,
  type RevenueRule,
} from '../report/index.js';
import { CLOSE_STAMPS, latestStamp, recordRunStamp } from '../lake/index.js';
import { now, todayUtc } from '../shared/clock.js';
import { readBuildRecord } from '../transform/index.js';
import type { Output } from '../output/index.js';
import { CloseInputError } from './errors.js';

export interface CloseOptions {
  /** Where the close reads the warehouse and the records, and appends its own (the command's Output). */
  readonly output: Output;
  /** "YYYY-MM" */
  readonly month: string;
  /** One group; every group of the warehouse when absent. */
  readonly group?: number;
  readonly by?: string;
  readonly note?: string;
  /** Close although the month is provisional; the record says so. */
  readonly force?: boolean;
  readonly rule: RevenueRule;
  /** Only check that the close would be accepted; write nothing. */
  readonly dryRun?: boolean;
  /** What the re-read before the close found, per group (null: not re-read; a group absent: not re-read either). */
  readonly reread?: ReadonlyMap<number, Reread> | null;
  /** The rates file (PERKS_FX_RATES): the month's rates of the group's currencies are frozen in the record. */
  readonly fx?: FxRates;
}

/** The operator's name when neither --by nor PERKS_OPERATOR (the caller's config) gives one: the login name. */
export function defaultOperator(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A close of a month already parsed and known to be over (the close workflow checks both once, up front). */
export interface EndedMonthClose extends Omit<CloseOptions, 'month'> {
  readonly month: ReportMonth;
}

/** What one group's close will write: its figures, and whether it is forced. */
interface FrozenGroup {
  readonly group: number;
  readonly figures: FrozenFigures;
  readonly forced: boolean;
}

/** Closes a month given as text: parsed, refused unless it is over, then closed as `closeEndedMonth` does. */
export async function closeMonth(options: CloseOptions): Promise<CloseRecord[]> {
  const month = parseMonth(options.month);
  assertMonthOver(month);
  return closeEndedMonth({ ...options, month });
}

/** Only a month that is over can be closed (refused: one line, exit 2). */
export function assertMonthOver(month: ReportMonth): void {
  const today = todayUtc();
  if (month.start > today)
    throw new CloseInputError(
      `--month=${month.ym} is in the future (today is ${today}): only a month that is over can be closed`,
    );
  if (month.next > today)
    throw new CloseInputError(
      `--month=${month.ym} is not over yet (it ends on ${month.end}): close it once the extract has passed its end plus the lookback`,
    );
}

/** Freezes every group's figures, then (unless a dry run) appends one record per group. */
export async function closeEndedMonth(options: EndedMonthClose): Promise<CloseRecord[]> {
  const records = await readCloses(options.output);
  const frozen = await freezeGroups(options, closesInForce(records));
  // Every check passed for every group before anything is written.
  if (options.dryRun) return [];
  return appendCloses(options, records, frozen);
}

/** Each group's figures of the month from the warehouse, every group checked before any is returned. */
async function freezeGroups(
  options: EndedMonthClose,
  inForce: ReadonlyMap<string, CloseRecord>,
): Promise<FrozenGroup[]> {
  const { month } = options;
  const wh = await openWarehouse(options.output.dir);
  try {
    const report = await loadReport(wh, options.output, month, options.group, options.rule);
    return report.groups.map((g) => {
      const stale = refuseUnclosable(options, g, inForce.get(closeKey(g.groupId, month.ym)));
      return {
        group: g.groupId,
        forced: g.closure.status === 'provisional' || stale > 0,
        figures: figuresOf(options, report, g),
      };
    });
  } finally {
    wh.close();
  }
}

/** Throws when the group's month cannot be closed now; returns its count of stale credit balances. */
function refuseUnclosable(options: EndedMonthClose, g: GroupSection, held: CloseRecord | undefined): number {
  const ym = options.month.ym;
  if (held) {
    throw new CloseInputError(
      `${ym} is already closed for group ${g.groupId} (by ${held.by} at ${held.at}, record ${held.seq}): ` +
        `reopen it first with \`perks reopen --month ${ym} --group ${g.groupId} --reason …\` if it must change`,
    );
  }
  if (g.closure.status === 'provisional' && !options.force) {
    throw new CloseInputError(
      `${ym} is ${g.closure.state} for group ${g.groupId}: ${g.closure.reason}; ` +
        `close it ${g.closure.state === 'partial' ? 'once backfilled' : 'then'}, or pass --force to sign it off now (the record will say so)`,
    );
  }
  // Freshness bounded where money is signed: a balance read before the month's last day is not the liability
  // at its end. The dry run (before the close's credit refresh) does not ask.
  const stale = Number(g.credit?.staleBalances ?? 0);
  if (stale > 0 && !options.force && !options.dryRun) {
    const them = stale === 1 ? 'it' : 'them';
    throw new CloseInputError(
      `${ym} cannot be signed off yet for group ${g.groupId}: ` +
        `${stale} credit balance${stale === 1 ? '' : 's'} older than the month end (read before ${g.credit!.monthEnd}, ` +
        `the oldest on ${g.credit!.oldestSnapshot}): the credit refresh did not reach ${them}; ` +
        `close again with a larger --budget-minutes, or pass --force to close on ${them} (the record will say so)`,
    );
  }
  return stale;
}

/** The figures a group's close freezes: its report section, its reconciliation lines, the rates and the rule. */
function figuresOf(options: EndedMonthClose, report: RevenueReport, g: GroupSection): FrozenFigures {
  const { reconciliation } = report;
  return {
    ...(options.fx ? { fx: freezeRates(options.fx, options.month.ym, g) } : {}),
    revenue_statuses: [...options.rule.statuses],
    reread: options.reread?.get(g.groupId) ?? null,
    section: g,
    reconciliation: {
      available: reconciliation.available,
      ...(reconciliation.note ? { note: reconciliation.note } : {}),
      lines: reconciliation.lines.filter((l) => l.groupId === g.groupId),
    },
  };
}

/** One close record per group, chained in order, all at the same instant. */
async function appendCloses(
  options: EndedMonthClose,
  records: readonly CloseRecord[],
  frozen: readonly FrozenGroup[],
): Promise<CloseRecord[]> {
  const at = await closeInstant(options.output);
  // before the records: an extract after the close stamps after it, whatever its clock (lake/run-stamps.ts)
  await recordRunStamp(options.output.dir, CLOSE_STAMPS, new Date(at));
  const written: CloseRecord[] = [];
  let chain = records;
  for (const f of frozen) {
    const record = await appendClose(options.output.dir, chain, {
      action: 'close',
      organisation_group_id: f.group,
      month: options.month.ym,
      at,
      by: options.by ?? defaultOperator(),
      note: options.note ?? '',
      forced: f.forced,
      figures: f.figures,
    });
    chain = [...chain, record];
    written.push(record);
  }
  return written;
}

export interface ReopenOptions {
  readonly output: Output;
  readonly month: string;
  readonly group: number;
  readonly reason: string;
  readonly by?: string;
}

/**
 * When the close happens: the program's clock, or the finish of the newest extract the warehouse was built
 * from, or 1 ms after the latest stamp of the output directory (lake/run-stamps.ts), whichever is latest. The
 * models count an observation landed after `closed_at` as an adjustment and one before it as part of the
 * frozen figures, so the close must come after everything its figures hold: on a clock behind the data (a
 * replayed day under PERKS_NOW, a machine whose clock is behind the one that extracted) an order would
 * otherwise be counted twice, frozen and adjusted; and a run's `_extracted_at` may be ahead of the clock and
 * of its run's finish (it follows the directory's stamps: a write-back's, the re-read's own).
 */
async function closeInstant(output: Output): Promise<string> {
  const lakeAt = (await readBuildRecord(output))?.lastSuccess?.lakeAt;
  const built = lakeAt ? Date.parse(lakeAt) : Number.NEGATIVE_INFINITY;
  return new Date(Math.max(now().getTime(), built, (await latestStamp(output.dir)) + 1)).toISOString();
}

/** Reopens a group's LATEST closed month only: an interior month would leave later closes on mutable numbers. */
export async function reopenMonth(options: ReopenOptions): Promise<CloseRecord> {
  const month = parseMonth(options.month);
  if (!options.reason.trim())
    throw new CloseInputError('--reason is empty: say why the month is reopened (it goes in the record)');
  const records = await readCloses(options.output);
  const inForce = closesInForce(records);
  const held = inForce.get(closeKey(options.group, month.ym));
  if (!held)
    throw new CloseInputError(
      `${month.ym} is not closed for group ${options.group}, so it cannot be reopened (\`perks closes\` lists the closes)`,
    );
  const later = [...inForce.values()]
    .filter((r) => r.organisation_group_id === options.group && r.month > month.ym)
    .map((r) => r.month)
    .sort();
  if (later.length > 0) {
    throw new CloseInputError(
      `${month.ym} is not group ${options.group}'s latest closed month` +
        ` (${later.join(', ')} ${later.length === 1 ? 'is' : 'are'} closed after it): reopen ${later.at(-1)} first`,
    );
  }
  return appendClose(options.output.dir, records, {
    action: 'reopen',
    organisation_group_id: options.group,
    month: month.ym,
    at: now().toISOString(),
    by: options.by ?? defaultOperator(),
    note: options.reason.trim(),
    forced: false,
    figures: null,
  });
}

/** The month's rates of the section's currencies (the ones that have a rate; the reporting currency is 1). */
function freezeRates(fx: FxRates, ym: string, section: GroupSection): FrozenFx {
  const rates: Record<string, string> = {};
  for (const c of section.currencies) {
    if (c.currency === '' || c.currency === fx.reportingCurrency) continue;
    const rate = rateOf(fx, ym, c.currency);
    if (rate !== undefined) rates[c.currency] = rate;
  }
  return { file: fx.file, reporting_currency: fx.reportingCurrency, rates };
}
