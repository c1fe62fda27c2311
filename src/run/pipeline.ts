/**
 * `perks run`: extract, forget users anonymised upstream, build, write back, and the report of the last
 * closed month, under one lock,
 * with one summary. Steps return results as data; a step after a failure is marked skipped.
 */
import { resolve } from 'node:path';
import { clientFromConfig } from '../api/index.js';
import type { Config } from '../config/index.js';
import { extract, type Event, type ExtractOptions, type ExtractResult } from '../extract/index.js';
import { forgetAnonymised } from '../forget/index.js';
import { compactLake } from '../compact/index.js';
import { acquireLock } from '../lake/index.js';
import { buildWarehouse, type BuildResult } from '../transform/index.js';
import { heldLine, runWriteback } from '../writeback/index.js';
import { closeSummary, lastClosedMonth, ReportInputError, writeRevenueReport } from '../report/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { now } from '../shared/clock.js';
import { checkpoint } from '../shared/output-hooks.js';

export interface StepResult {
  name: 'extract' | 'forget' | 'compact' | 'build' | 'writeback' | 'report';
  status: 'success' | 'error' | 'skipped';
  ms: number;
  detail: string;
  exitCode: number;
}

export interface RunSummary {
  outDir: string;
  steps: StepResult[];
  extract?: ExtractResult & { manifest: string };
  build?: BuildResult;
  files: { warehouse: string; marts: string; reports: string[] };
  exitCode: number;
}

/** The calendar month before `now` (UTC), YYYY-MM: the report's month when no month is closed yet. */
function previousMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

export async function runPipeline(
  config: Config,
  options: ExtractOptions & { emit?: (e: Event) => void; month?: string; writeback?: boolean } = {},
): Promise<RunSummary> {
  const outDir = resolve(config.output);
  // One instant for the whole run: the extract's upper bound, the build's as-of day, the report's month.
  const startedAt = options.now ?? now();
  const lock = await acquireLock(outDir);
  const client = clientFromConfig(config);
  const steps: StepResult[] = [];
  const summary: RunSummary = {
    outDir,
    steps,
    files: { warehouse: `${outDir}/warehouse.duckdb`, marts: `${outDir}/marts`, reports: [] },
    exitCode: 0,
  };
  const step = async (name: StepResult['name'], work: () => Promise<{ detail: string; exitCode?: number }>) => {
    if (steps.some((s) => s.status === 'error')) {
      steps.push({ name, status: 'skipped', ms: 0, detail: 'an earlier step failed', exitCode: 0 });
      return;
    }
    const started = Date.now();
    try {
      const { detail, exitCode = 0 } = await work();
      steps.push({
        name,
        status: exitCode === ExitCode.failed ? 'error' : 'success',
        ms: Date.now() - started,
        detail,
        exitCode,
      });
    } catch (err) {
      const exitCode = (err as { exitCode?: number }).exitCode ?? ExitCode.failed;
      steps.push({
        name,
        status: 'error',
        ms: Date.now() - started,
        detail: redact(err instanceof Error ? err.message : String(err)),
        exitCode,
      });
    }
  };
  try {
    await step('extract', async () => {
      const r = await extract({ ...config, output: outDir }, { ...options, now: startedAt, client, lock: false });
      summary.extract = r;
      const rows = r.streams.reduce((n, s) => n + s.rows, 0);
      return { detail: `${rows} rows, ${r.api.calls} calls, ${r.quarantined} quarantined`, exitCode: r.exitCode };
    });
    // Users anonymised upstream: their names and emails leave the older snapshots and windows too.
    await step('forget', async () => {
      const r = await forgetAnonymised(outDir, { lock: false });
      return {
        detail: r.users.length
          ? `${r.users.length} anonymised users forgotten: ${r.rows} rows in ${r.files} files, ${r.quarantineLines} quarantined records`
          : 'no anonymised user left behind',
      };
    });
    await step('compact', async () => {
      const r = await compactLake(outDir, { lookbackDays: config.lookbackDays, now: startedAt, lock: false });
      return {
        detail: r.streams
          .map((s) => `${s.stream} ${s.months} months, files ${s.filesBefore} -> ${s.filesAfter}`)
          .join('; '),
      };
    });
    await step('build', async () => {
      await checkpoint('extract'); // with a store, the extract's commits are published first (a kill later keeps them)
      const r = await buildWarehouse({ outDir, asOf: startedAt.toISOString().slice(0, 10) });
      summary.build = r;
      if (!r.ok) return { detail: `${r.error ?? 'the build failed'}${r.impact ?? ''}`, exitCode: ExitCode.failed };
      const models = r.steps.filter((st) => st.kind === 'model').length;
      const tests = r.steps.filter((st) => st.kind === 'test' && st.status === 'success').length;
      const warned = r.warnings.length ? `; ${r.warnings.length} warned: ${r.warnings.join('; ')}` : '';
      return {
        detail: `${models} models, ${tests} data tests passed, ${r.marts.length} marts exported${warned}`,
        ...(r.warnings.length ? { exitCode: ExitCode.partial } : {}),
      };
    });
    if (options.writeback !== false) {
      await step('writeback', async () => {
        const r = await runWriteback({ outDir, client, config, limit: config.writebackLimit });
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
      });
    }
    await step('report', async () => {
      const groups = summary.extract?.groups.map((g) => g.id) ?? [];
      const closed = await lastClosedMonth(outDir, groups);
      const month = options.month ?? closed ?? previousMonth(startedAt);
      let r: Awaited<ReturnType<typeof writeRevenueReport>>;
      try {
        r = await writeRevenueReport({ outDir, month, formats: ['html', 'csv', 'md'] });
      } catch (err) {
        // A young lake (less than a month extracted) has no month to report yet: not a failure of the run.
        if (options.month === undefined && err instanceof ReportInputError)
          return { detail: `no month to report yet (${err.message})` };
        throw err;
      }
      summary.files.reports = r.files;
      return { detail: `revenue ${month}: ${r.status}; ${await closeSummary(outDir, groups)}` };
    });
  } finally {
    await client.close();
    await lock.release();
  }
  summary.exitCode = steps.reduce(
    (worst, s) =>
      s.exitCode === ExitCode.failed || worst === ExitCode.failed ? ExitCode.failed : Math.max(worst, s.exitCode),
    0,
  );
  return summary;
}
