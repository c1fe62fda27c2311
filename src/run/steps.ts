/**
 * The steps of `perks run`, in order, as data: each does one stage and says in one line what it did (and its exit
 * code when it is not 0). A step reads what the steps before it left in the run (the extract's groups, the build).
 */
import type { PerksClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import { extract, type Event, type ExtractOptions } from '../extract/index.js';
import { forgetAnonymised } from '../forget/index.js';
import { compactLake } from '../compact/index.js';
import {
  buildSettingsOf,
  buildWarehouse,
  describeIntervals,
  describeKept,
  describeMonthFiles,
} from '../transform/index.js';
import { LOCAL_OUTPUT_HOOKS, type OutputHooks } from '../shared/output-hooks.js';
import { heldLine, runWriteback } from '../writeback/index.js';
import { closeSummary, lastFinalMonth, ReportInputError, writeRevenueReport } from '../report/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { RunSummary, StepResult } from './result.js';
import { orderChanges, revenueMoves, revenueTotals, userChanges } from './changes.js';

export type RunOptions = ExtractOptions & {
  emit?: (e: Event) => void;
  month?: string;
  writeback?: boolean;
  /** The output's hooks (the command's resolved output): the extract, the build and the write-back report to a store. */
  hooks?: OutputHooks;
};

/** What every step of one run shares: the settings, the output directory, the run's instant and client, the summary. */
export interface RunContext {
  readonly config: Config;
  readonly outDir: string;
  /** One instant for the whole run: the extract's upper bound, the build's as-of day, the report's month. */
  readonly startedAt: Date;
  readonly client: PerksClient;
  readonly options: RunOptions;
  readonly summary: RunSummary;
}

export interface Step {
  readonly name: StepResult['name'];
  /** The step's line of the summary, and its exit code when it is not 0 (1 marks the step failed). */
  readonly run: (ctx: RunContext) => Promise<{ detail: string; exitCode?: number }>;
  /** Runs only when this says so (write-back: unless --no-writeback). */
  readonly when?: (ctx: RunContext) => boolean;
}

export const STEPS: readonly Step[] = [
  { name: 'extract', run: extractStep },
  // Users anonymised upstream: their names and emails leave the older snapshots and windows too.
  { name: 'forget', run: forgetStep },
  { name: 'compact', run: compactStep },
  { name: 'build', run: buildStep },
  { name: 'writeback', run: writebackStep, when: (ctx) => ctx.options.writeback !== false },
  { name: 'report', run: reportStep },
];

async function extractStep({ config, outDir, startedAt, client, options, summary }: RunContext) {
  const r = await extract({ ...config, output: outDir }, { ...options, now: startedAt, client, lock: false });
  summary.extract = r;
  summary.changes = { orders: await orderChanges(outDir, r.runId), users: userChanges(r) };
  const rows = r.streams.reduce((n, s) => n + s.rows, 0);
  const held = r.heldMessage ? `; ${r.heldMessage}` : '';
  return { detail: `${rows} rows, ${r.api.calls} calls, ${r.quarantined} quarantined${held}`, exitCode: r.exitCode };
}

async function forgetStep({ outDir }: RunContext) {
  const r = await forgetAnonymised(outDir, { lock: false });
  return {
    detail: r.users.length
      ? `${r.users.length} anonymised users forgotten: ${r.rows} rows in ${r.files} files, ${r.quarantineLines} quarantined records`
      : 'no anonymised user left behind',
  };
}

async function compactStep({ config, outDir, startedAt }: RunContext) {
  const r = await compactLake(outDir, { lookbackDays: config.lookbackDays, now: startedAt, lock: false });
  return {
    detail: r.streams
      .map((s) => `${s.stream} ${s.months} months, files ${s.filesBefore} -> ${s.filesAfter}`)
      .join('; '),
  };
}

async function buildStep({ config, outDir, startedAt, options, summary }: RunContext) {
  await (options.hooks ?? LOCAL_OUTPUT_HOOKS).checkpoint('extract'); // with a store, the extract's commits are published first (a kill later keeps them)
  const before = await revenueTotals(outDir); // recognised revenue as the last build left it
  const r = await buildWarehouse({ outDir, asOf: startedAt.toISOString().slice(0, 10), ...buildSettingsOf(config) });
  summary.build = r;
  if (!r.ok) return { detail: `${r.error ?? 'the build failed'}${r.impact ?? ''}`, exitCode: ExitCode.failed };
  const after = await revenueTotals(outDir);
  if (after) summary.changes = { ...summary.changes, revenue: revenueMoves(before, after) };
  const models = r.steps.filter((st) => st.kind === 'model').length;
  const tests = r.steps.filter((st) => st.kind === 'test' && st.status === 'success').length;
  const warned = r.warnings.length ? `; ${r.warnings.length} warned: ${r.warnings.join('; ')}` : '';
  const intervals = r.steps.flatMap((st) => [
    ...(st.intervals ? [`; ${describeIntervals(st.name, st.intervals)}`] : []),
    ...(st.monthFiles ? [`; ${describeMonthFiles(st.name, st.monthFiles)}`] : []),
  ]);
  return {
    detail: `${models} models${describeKept(r.steps, 'model')}, ${tests} data tests passed${describeKept(r.steps, 'test')}, ${r.marts.length} marts exported${intervals.join('')}${warned}`,
    ...(r.warnings.length ? { exitCode: ExitCode.partial } : {}),
  };
}

async function writebackStep({ config, outDir, client, options }: RunContext) {
  const r = await runWriteback({ outDir, client, config, limit: config.writebackLimit, hooks: options.hooks });
  // Rejected or unresolved rows make the run partial (exit 4), never a failure: the report still runs.
  const unresolved = r.unresolved_pending.length
    ? `, ${r.unresolved_pending.length} pending unresolved (${[...new Set(r.unresolved_pending.map((u) => u.reason))].slice(0, 3).join('; ')})`
    : '';
  const deferred = r.deferred ? `, ${r.deferred} left for the next run (PERKS_WRITEBACK_LIMIT)` : '';
  const held = r.held.map((h) => `; ${heldLine(h)}`).join('');
  const l = r.learned;
  const learned =
    l && l.fromLake + l.fromApi
      ? `, ${l.fromLake + l.fromApi} already stored upstream (${l.reason}; ${l.calls} calls to learn it)`
      : '';
  return {
    detail: `${r.sent} sent, ${r.rejected} rejected, ${r.calls} calls${learned}${unresolved}${deferred}${held}`,
    exitCode: r.status === 'partial' ? ExitCode.partial : 0,
  };
}

/** The report of the last month closed by the extract (or --month, or the month before the run's). */
async function reportStep({ config, outDir, startedAt, options, summary }: RunContext) {
  const groups = summary.extract?.groups.map((g) => g.id) ?? [];
  const closed = await lastFinalMonth(outDir, groups);
  const month = options.month ?? closed ?? previousMonth(startedAt);
  let r: Awaited<ReturnType<typeof writeRevenueReport>>;
  try {
    r = await writeRevenueReport({ outDir, month, formats: ['html', 'csv', 'md'], settings: config });
  } catch (err) {
    // A young lake (less than a month extracted) has no month to report yet: not a failure of the run.
    if (options.month === undefined && err instanceof ReportInputError)
      return { detail: `no month to report yet (${err.message})` };
    throw err;
  }
  summary.files.reports = r.files;
  summary.report = { month, status: r.status };
  return { detail: `revenue ${month}: ${r.status}; ${await closeSummary(outDir, groups)}` };
}

/** The calendar month before `now` (UTC), YYYY-MM: the report's month when no month is closed yet. */
function previousMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}
