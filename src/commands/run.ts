/** `perks run`: the whole job, unattended and safe to rerun. */
import type { CommandModule } from 'yargs';
import { appendStepSummary, formatRunSummary, runPipeline } from '../run/index.js';
import { parseStreams } from './extract.js';
import { isRealMonth } from '../shared/checks.js';
import { ConfigError } from '../shared/exit-codes.js';
import { handle } from './handle.js';
import {
  ACCEPT_CHANGES,
  type ApiFlags,
  BUDGET_MINUTES,
  configFromFlags,
  progressFromFlags,
  progressOption,
  QUIET,
  outputOf,
  withApiOptions,
} from './options.js';
import type { Config } from '../config/index.js';
import type { Output } from '../output/index.js';
import { appendFileSync } from 'node:fs';
import { now } from '../shared/clock.js';
import { collectStatus, judge, statusMarkdown, type FreshnessOptions } from '../status/index.js';
import { alertOnThrow, alertRun, alertSummaryLines } from '../alerts/index.js';
import { freshnessOptions } from './status.js';
import { Lineage, RunLineage } from '../lineage/index.js';

interface RunFlags extends ApiFlags {
  streams?: string;
  month?: string;
  'budget-minutes'?: number;
  'no-writeback'?: boolean;
  writeback?: boolean;
  quiet?: boolean;
  progress?: string;
  'writeback-limit'?: string;
  'accept-changes'?: boolean;
}

export const runCommand: CommandModule<object, RunFlags> = {
  command: 'run',
  describe: 'Extract, build the marts, write interactions back, and report the last final month',
  builder: (y) =>
    withApiOptions(y)
      .option('streams', { type: 'string', describe: 'limit the extract to these streams' })
      .option('month', {
        type: 'string',
        describe:
          'report month YYYY-MM (default: the last month final for every group, past the lookback; before any is, the last calendar month)',
      })
      .option('budget-minutes', BUDGET_MINUTES)
      .option('writeback', {
        type: 'boolean',
        default: true,
        describe: 'post interactions back (--no-writeback to skip)',
      })
      .option('writeback-limit', {
        type: 'string',
        describe: 'post at most N interactions in this run; the rest wait for the next (PERKS_WRITEBACK_LIMIT)',
      })
      .option('accept-changes', ACCEPT_CHANGES)
      .option('quiet', QUIET)
      .option('progress', progressOption('json')),
  handler: (argv) =>
    handle(async () => {
      // --writeback-limit goes through the same validation as PERKS_WRITEBACK_LIMIT (one line, exit 2) and wins over it.
      const config = configFromFlags(argv);
      if (argv.month !== undefined && !isRealMonth(argv.month))
        throw new ConfigError(
          `--month=${JSON.stringify(argv.month)} is invalid: expected a month YYYY-MM, e.g. 2026-10`,
        );
      const budget = argv['budget-minutes'];
      if (budget !== undefined && !(budget >= 0 && Number.isFinite(budget)))
        throw new ConfigError('--budget-minutes must be a number of minutes, 0 or more');
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output);
      const summary = await lineage.around('run', async (run) => {
        const s = await alertOnThrow(config, output, 'perks run', () =>
          runPipeline(config, {
            output,
            streams: parseStreams(argv.streams),
            budgetMinutes: argv['budget-minutes'],
            month: argv.month,
            writeback: argv.writeback,
            acceptChanges: argv['accept-changes'],
            emit: progressFromFlags(argv, 'json'),
            lineage: lineage.enabled ? new RunLineage(lineage, run.asParent()) : undefined,
          }),
        );
        const failed = s.steps.find((st) => st.status === 'error');
        run.ending = { error: failed && `${failed.name}: ${failed.detail}` };
        run.exitCode = s.exitCode;
        return s;
      });
      summary.alertLines = alertSummaryLines(await alertRun(config, output, summary, thresholds(config)));
      process.stdout.write(formatRunSummary(summary));
      appendStepSummary(summary, config.stepSummary);
      await appendFreshness(config, output);
      return summary.exitCode;
    }),
};

/** The status thresholds for the stale-data alert, or why they cannot be read (the run's outcome stands either way). */
function thresholds(config: Config): FreshnessOptions | { error: string } {
  try {
    return freshnessOptions({}, config);
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** With GITHUB_STEP_SUMMARY set, `perks status` follows the run's summary there (its thresholds from the environment). */
async function appendFreshness(config: Config, output: Output): Promise<void> {
  const file = config.stepSummary;
  if (!file) return;
  try {
    const options = freshnessOptions({}, config);
    const report = await collectStatus(output, config, now());
    appendFileSync(file, statusMarkdown(report, judge(report, options), options));
  } catch (err) {
    // the run's outcome stands: the freshness table is a view of it, not a step
    appendFileSync(file, `Freshness unknown: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
  }
}
