/**
 * `perks run`: extract, forget users anonymised upstream, compact, build, write back, and the report of the last
 * closed month (steps.ts), under one lock, with one summary. Steps return results as data; a step after a
 * failure is marked skipped.
 */
import { clientFromConfig } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Output } from '../output/index.js';
import { acquireLock } from '../lake/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { now } from '../shared/clock.js';
import type { RunSummary, StepResult } from './result.js';
import { checkReportMonth } from './report-month.js';
import { STEPS, type RunContext, type RunOptions, type Step } from './steps.js';

export async function runPipeline(config: Config, options: RunOptions): Promise<RunSummary> {
  const outDir = options.output.dir;
  const startedAt = options.now ?? now();
  checkReportMonth(outDir, config, options, startedAt); // before the first call, not after the build
  const lock = await acquireLock(outDir);
  const client = clientFromConfig(config);
  const summary = emptySummary(options.output);
  const ctx: RunContext = { config, startedAt, client, options, summary };
  try {
    for (const step of STEPS) if (!step.when || step.when(ctx)) summary.steps.push(await runStep(ctx, step));
    // the changes as one JSON line too, beside the progress events (off a terminal: on stderr)
    if (summary.changes) options.emit?.({ event: 'run_changes', ...summary.changes });
  } finally {
    await client.close();
    await lock.release();
  }
  summary.exitCode = worstExitCode(summary.steps);
  return summary;
}

function emptySummary(output: Output): RunSummary {
  return {
    outDir: output.dir,
    steps: [],
    files: { warehouse: output.warehouse, marts: output.marts, reports: [] },
    exitCode: 0,
  };
}

/** One step as data: skipped after a failure, else its line, time and exit code, or its error as one line. */
async function runStep(ctx: RunContext, step: Step): Promise<StepResult> {
  const { name } = step;
  if (ctx.summary.steps.some((s) => s.status === 'error'))
    return { name, status: 'skipped', ms: 0, detail: 'an earlier step failed', exitCode: 0 };
  const started = Date.now();
  ctx.step = ctx.options.lineage?.step(name, step.ownRunId);
  try {
    const { detail, exitCode = 0, lineage } = await step.run(ctx);
    await ctx.step?.end(exitCode, lineage);
    return {
      name,
      status: exitCode === ExitCode.failed ? 'error' : 'success',
      ms: Date.now() - started,
      detail,
      exitCode,
    };
  } catch (err) {
    await ctx.step?.fail(err);
    const exitCode = (err as { exitCode?: number }).exitCode ?? ExitCode.failed;
    const detail = redact(err instanceof Error ? err.message : String(err));
    return { name, status: 'error', ms: Date.now() - started, detail, exitCode };
  }
}

/** A failure (1) wins; otherwise the highest code (4: partial, 2: bad input, 3: credentials). */
function worstExitCode(steps: readonly StepResult[]): number {
  return steps.reduce(
    (worst, s) =>
      s.exitCode === ExitCode.failed || worst === ExitCode.failed ? ExitCode.failed : Math.max(worst, s.exitCode),
    0,
  );
}
