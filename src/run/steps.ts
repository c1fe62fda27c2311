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
import type { Output } from '../output/index.js';
import { heldLine, runWriteback } from '../writeback/index.js';
import { closeSummary, lastFinalMonth, ReportInputError, writeRevenueReport } from '../report/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { RunSummary, StepResult } from './result.js';
import { orderChanges, revenueMoves, revenueTotals, userChanges } from './changes.js';
import { newRunId } from '../shared/run-id.js';
import {
  compactDatasets,
  extractDatasets,
  forgetDatasets,
  reportDatasets,
  writebackDatasets,
  type DatasetIo,
  type Ending,
  type JobRun,
  type Place,
  type RunLineage,
} from '../lineage/index.js';
import { now } from '../shared/clock.js';

export type RunOptions = ExtractOptions & {
  emit?: (e: Event) => void;
  month?: string;
  writeback?: boolean;
  /** Where the run writes (the command's Output): its folder; the extract, the build and the write-back report to a store. */
  output: Output;
  /** OpenLineage: each step a job run, the run's child (none: nothing is sent). */
  lineage?: RunLineage;
};

/** What every step of one run shares: the settings, the run's instant and client, the options (its Output), the summary. */
export interface RunContext {
  readonly config: Config;
  /** One instant for the whole run: the extract's upper bound, the build's as-of day, the report's month. */
  readonly startedAt: Date;
  readonly client: PerksClient;
  readonly options: RunOptions;
  readonly summary: RunSummary;
  /** The step under way as an OpenLineage job run (with lineage configured). */
  step?: JobRun;
}

export interface Step {
  readonly name: StepResult['name'];
  /**
   * The step's line of the summary, and its exit code when it is not 0 (1 marks the step failed); `lineage`, what
   * it read and wrote.
   */
  readonly run: (ctx: RunContext) => Promise<{ detail: string; exitCode?: number; lineage?: Ending }>;
  /** The step makes its own run id (the extract's, the write-back's): its lineage starts when it has it. */
  readonly ownRunId?: boolean;
  /** Runs only when this says so (write-back: unless --no-writeback). */
  readonly when?: (ctx: RunContext) => boolean;
}

export const STEPS: readonly Step[] = [
  { name: 'extract', run: extractStep, ownRunId: true },
  // Users anonymised upstream: their names and emails leave the older snapshots and windows too.
  { name: 'forget', run: forgetStep },
  { name: 'compact', run: compactStep },
  { name: 'build', run: buildStep },
  { name: 'writeback', run: writebackStep, when: (ctx) => ctx.options.writeback !== false, ownRunId: true },
  { name: 'report', run: reportStep },
];

/** What a step read and wrote, described (after it, once) only with lineage configured. */
function described(options: RunOptions, io: (place: Place) => DatasetIo, error?: string): Ending | undefined {
  const place = options.lineage?.place;
  return place && { io: () => io(place), error };
}

async function extractStep({ config, startedAt, client, options, summary, step }: RunContext) {
  const emit = (e: Event) => {
    if (e.event === 'run') step?.begin(String(e.run_id)); // the manifest's run id, the lineage's too
    options.emit?.(e);
  };
  const r = await extract(config, { ...options, emit, now: startedAt, client, lock: false });
  summary.extract = r;
  summary.changes = { orders: await orderChanges(options.output.dir, r.runId), users: userChanges(r) };
  const rows = r.streams.reduce((n, s) => n + s.rows, 0);
  const held = r.heldMessage ? `; ${r.heldMessage}` : '';
  const failed = r.streams.filter((s) => s.status === 'error').map((s) => `${s.name}: ${s.error}`);
  return {
    detail: `${rows} rows, ${r.api.calls} calls, ${r.quarantined} quarantined${held}`,
    exitCode: r.exitCode,
    lineage: described(options, (place) => extractDatasets(place, r), failed.join('; ') || undefined),
  };
}

async function forgetStep({ options }: RunContext) {
  const r = await forgetAnonymised(options.output, { lock: false });
  return {
    lineage: described(options, (place) => forgetDatasets(place, r)),
    detail: r.users.length
      ? `${r.users.length} anonymised users forgotten: ${r.rows} rows in ${r.files} files, ${r.quarantineLines} quarantined records`
      : 'no anonymised user left behind',
  };
}

async function compactStep({ config, startedAt, options }: RunContext) {
  const r = await compactLake(options.output, { lookbackDays: config.lookbackDays, now: startedAt, lock: false });
  return {
    lineage: described(options, (place) => compactDatasets(place, r)),
    detail: r.streams
      .map((s) => `${s.stream} ${s.months} months, files ${s.filesBefore} -> ${s.filesAfter}`)
      .join('; '),
  };
}

async function buildStep({ config, startedAt, options, summary, step }: RunContext) {
  await options.output.hooks.checkpoint('extract'); // with a store, the extract's commits are published first (a kill later keeps them)
  const before = await revenueTotals(options.output.dir); // recognised revenue as the last build left it
  const began = now();
  const r = await buildWarehouse({
    output: options.output,
    asOf: startedAt.toISOString().slice(0, 10),
    ...buildSettingsOf(config),
  });
  summary.build = r;
  const lineage = step && options.lineage?.lineage.buildEnding(step, r, began);
  if (!r.ok) return { detail: `${r.error ?? 'the build failed'}${r.impact ?? ''}`, exitCode: ExitCode.failed, lineage };
  const after = await revenueTotals(options.output.dir);
  if (after) summary.changes = { ...summary.changes, revenue: revenueMoves(before, after) };
  const models = r.steps.filter((st) => st.kind === 'model').length;
  const tests = r.steps.filter((st) => st.kind === 'test' && st.status === 'success').length;
  const warned = r.warnings.length ? `; ${r.warnings.length} warned: ${r.warnings.join('; ')}` : '';
  const intervals = r.steps.flatMap((st) => [
    ...(st.intervals ? [`; ${describeIntervals(st.name, st.intervals)}`] : []),
    ...(st.monthFiles ? [`; ${describeMonthFiles(st.name, st.monthFiles)}`] : []),
  ]);
  return {
    detail:
      `${models} models${describeKept(r.steps, 'model')}, ` +
      `${tests} data tests passed${describeKept(r.steps, 'test')}, ${r.marts.length} marts exported${intervals.join('')}${warned}`,
    ...(r.warnings.length ? { exitCode: ExitCode.partial } : {}),
    lineage,
  };
}

async function writebackStep({ config, client, options, step }: RunContext) {
  const runId = newRunId('wb-'); // the ledger's and the lineage's run id
  step?.begin(runId);
  const r = await runWriteback({ output: options.output, client, config, limit: config.writebackLimit, runId });
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
    lineage: described(options, (place) => writebackDatasets(place, r)),
  };
}

/** The report of the last month closed by the extract (or --month, or the month before the run's). */
async function reportStep({ config, startedAt, options, summary }: RunContext) {
  const { output } = options;
  const groups = summary.extract?.groups.map((g) => g.id) ?? [];
  const closed = await lastFinalMonth(output.dir, groups);
  const month = options.month ?? closed ?? previousMonth(startedAt);
  let r: Awaited<ReturnType<typeof writeRevenueReport>>;
  try {
    r = await writeRevenueReport({ output, month, formats: ['html', 'csv', 'md'], settings: config });
  } catch (err) {
    // A young lake (less than a month extracted) has no month to report yet: not a failure of the run.
    if (options.month === undefined && err instanceof ReportInputError)
      return { detail: `no month to report yet (${err.message})` };
    throw err;
  }
  summary.files.reports = r.files;
  summary.report = { month, status: r.status };
  return {
    detail: `revenue ${month}: ${r.status}; ${await closeSummary(output, groups)}`,
    lineage: described(options, (place) => reportDatasets(place, r.files)),
  };
}

/** The calendar month before `now` (UTC), YYYY-MM: the report's month when no month is closed yet. */
function previousMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}
