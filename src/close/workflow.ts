/**
 * `perks close` and `perks reopen` from start to end. A close: the month checked once to be over; with an API,
 * the refusals first under the output's lock (a close that would be refused re-reads nothing), then the month
 * re-read and its holders' credit refreshed, the warehouse rebuilt and the close written under the lock. After
 * either writes its record, the warehouse is rebuilt and the month's report written again (refresh.ts), so the
 * marts and the report say at once what the record says; then all of it is checkpointed (with a store: published
 * in one commit) before the command reports it.
 */
import type { Config } from '../config/index.js';
import type { CloseRecord, FxRates } from '../closes/index.js';
import { acquireLock } from '../lake/index.js';
import type { ReportMonth, ReportSettings, RevenueRule } from '../report/index.js';
import { crashPoint } from '../shared/crash-points.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import type { Output } from '../output/index.js';
import { buildSettingsOf, buildWarehouse, type BuildSettings } from '../transform/index.js';
import { assertMonthOver, closeEndedMonth, reopenMonth, type EndedMonthClose, type ReopenOptions } from './close.js';
import { refreshCredit, type CreditRefresh } from './credit-refresh.js';
import { rereadMonth, type MonthReread } from './reread.js';
import { refreshAfterClose, refreshFailure } from './refresh.js';

export interface CloseRequest {
  /** The settings, and the API the re-read reads from (none: no re-read). */
  readonly config: Config;
  /** Where the close writes (the command's Output): its folder; the record checkpointed to a store. */
  readonly output: Output;
  readonly month: ReportMonth;
  /** One group; every group of the warehouse when absent. */
  readonly group?: number;
  readonly by?: string;
  readonly note?: string;
  /** Close although the month is provisional; the record says so. */
  readonly force?: boolean;
  readonly rule: RevenueRule;
  readonly fx?: FxRates;
  /** Re-read the month from the API before the close (false: --no-reread). */
  readonly reread: boolean;
  /** The credit refresh's call budget, in minutes at the rate limit. */
  readonly budgetMinutes: number;
  /** Apply a re-read beyond the settled-change guard (`--accept-changes`); the record keeps what was accepted. */
  readonly acceptChanges?: boolean;
}

/** What the re-read before the close found and did. */
export interface RereadBeforeClose {
  /** Its run and calls, and per group what the close record keeps. */
  readonly found: Omit<MonthReread, 'lines'>;
  /** For the terminal: the figures per group and currency, before → after, then the first changes named. */
  readonly lines: readonly string[];
  readonly credit: CreditRefresh;
  /** How long the credit refresh took. */
  readonly creditMs: number;
}

export interface CloseOutcome {
  /** The re-read, or why there was none: no API configured, or --no-reread. */
  readonly reread: RereadBeforeClose | 'no-api' | 'not-asked';
  /** One record per group closed. */
  readonly written: readonly CloseRecord[];
  /** The month's HTML reports written again after the close (the marts were rebuilt before them). */
  readonly reports: readonly string[];
}

export interface ReopenOutcome {
  readonly record: CloseRecord;
  /** The month's HTML reports written again after the reopen (the marts were rebuilt before them). */
  readonly reports: readonly string[];
}

/** `perks close`: the month (re-read first when asked and an API is configured) signed off per group. */
export async function runClose(request: CloseRequest): Promise<CloseOutcome> {
  assertMonthOver(request.month);
  const { config, output, month, group, by, note, force, rule, fx } = request;
  const close: EndedMonthClose = { output, month, group, by, note, force, rule, fx };
  const reread = await rereadBeforeClose(request, close);
  const found = typeof reread === 'string' ? null : reread.found.groups;
  const { written, refreshed } = await locked(
    output,
    async () => {
      const records = await rebuildAndClose({ ...close, reread: found }, config);
      const groups = records.map((r) => r.organisation_group_id);
      return {
        written: records,
        refreshed: await refreshAfterClose(output, month.ym, groups, request.config, rule),
      };
    },
    'commit records',
  );
  if (refreshed.failed)
    throw refreshFailure(`${month.ym} is closed (${recordsText(written)})`, month.ym, refreshed.failed);
  return { reread, written, reports: refreshed.reports };
}

/**
 * `perks reopen`: the reopen record appended under the output's lock, then the marts and the report made true
 * under the `settings` the command read.
 */
export async function runReopen(
  options: ReopenOptions & {
    readonly settings: BuildSettings & ReportSettings;
  },
): Promise<ReopenOutcome> {
  const { output } = options;
  const { record, refreshed } = await locked(
    output,
    async () => {
      const reopened = await reopenMonth(options);
      return {
        record: reopened,
        refreshed: await refreshAfterClose(output, reopened.month, [options.group], options.settings),
      };
    },
    'commit records',
  );
  if (refreshed.failed)
    throw refreshFailure(`${record.month} is reopened (${recordsText([record])})`, record.month, refreshed.failed);
  return { record, reports: refreshed.reports };
}

const recordsText = (records: readonly CloseRecord[]) =>
  `record${records.length === 1 ? '' : 's'} ${records.map((r) => r.seq).join(', ')}`;

async function rereadBeforeClose(request: CloseRequest, close: EndedMonthClose): Promise<CloseOutcome['reread']> {
  if (!request.reread) return 'not-asked';
  if (!request.config.baseUrl) return 'no-api';
  // the refusals first: a close that would be refused re-reads nothing
  await locked(close.output, () => closeEndedMonth({ ...close, dryRun: true }));
  const { group, acceptChanges, output } = request;
  const { lines, ...found } = await rereadMonth(request.config, request.month, { output, group, acceptChanges });
  const started = Date.now();
  const credit = await refreshCredit(request.config, request.month, {
    output,
    group: request.group,
    budgetMinutes: request.budgetMinutes,
  });
  return { found, lines, credit, creditMs: Date.now() - started };
}

/** After a re-read the warehouse is rebuilt, so the figures frozen are the ones re-read. */
async function rebuildAndClose(close: EndedMonthClose, settings: BuildSettings): Promise<CloseRecord[]> {
  if (close.reread) {
    const built = await buildWarehouse({ output: close.output, ...buildSettingsOf(settings) });
    if (!built.ok)
      throw new UserFacingError(
        `the build after the re-read failed; nothing was closed: ${built.error}`,
        ExitCode.failed,
      );
  }
  return closeEndedMonth(close);
}

/**
 * The work under the output's lock. 'commit records': the work appends to the close record, which (with a store,
 * through the output's hooks) is committed before the lock is released and the command reports it.
 */
async function locked<T>(output: Output, work: () => Promise<T>, records?: 'commit records'): Promise<T> {
  const lock = await acquireLock(output.dir);
  try {
    const result = await work();
    if (records) {
      crashPoint('close-before-publish');
      await output.hooks.checkpoint('close record');
      crashPoint('close-after-publish');
    }
    return result;
  } finally {
    await lock.release();
  }
}
