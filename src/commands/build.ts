/** `perks build`: the SQL models into <out>/warehouse.duckdb, data tests, marts to <out>/marts/*.parquet. */
import type { CommandModule } from 'yargs';
import { acquireLock } from '../lake/index.js';
import { finishSwitch } from '../compact/index.js';
import { ConfigError, ExitCode } from '../shared/exit-codes.js';
import {
  buildWarehouse,
  describeIntervals,
  describeKept,
  describeMonthFiles,
  type BuildResult,
  type MartLayout,
  type StepResult,
} from '../transform/index.js';
import { handle } from './handle.js';
import { DEFAULTS } from '../config/index.js';
import { configFromFlags, outputOf, QUIET, type OutputFlags } from './options.js';
import { Lineage } from '../lineage/index.js';
import { now } from '../shared/clock.js';

const SEGMENTS = DEFAULTS.build.segments;

interface BuildFlags extends OutputFlags {
  'as-of'?: string;
  'new-days'?: number;
  'active-days'?: number;
  'dormant-days'?: number;
  'memory-limit'?: string;
  full?: boolean;
  'verify-incremental'?: boolean;
  quiet?: boolean;
}

function days(flag: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value <= 0)
    throw new ConfigError(`--${flag}=${value} is invalid: expected a whole number of days above 0`);
  return value;
}

export const buildCommand: CommandModule<object, BuildFlags> = {
  command: 'build',
  describe: 'Build the SQL models into <out>/warehouse.duckdb, run the data tests, export the marts to <out>/marts',
  builder: (y) =>
    y
      .option('as-of', {
        type: 'string',
        describe: 'the day engagement is measured at, YYYY-MM-DD (default today, UTC)',
      })
      .option('new-days', {
        type: 'number',
        describe: `segment "new": created within this many days (default ${SEGMENTS.newDays})`,
      })
      .option('active-days', {
        type: 'number',
        describe: `segment "active": login or order within this many days (default ${SEGMENTS.activeDays})`,
      })
      .option('dormant-days', {
        type: 'number',
        describe: `segment "dormant" up to this many days, "churned" beyond (default ${SEGMENTS.dormantDays})`,
      })
      .option('memory-limit', {
        type: 'string',
        describe:
          "DuckDB's memory limit for the build, e.g. 4GB; beyond it DuckDB spills to a folder inside <out> " +
          `(default PERKS_BUILD_MEMORY_LIMIT, else ${DEFAULTS.build.memoryLimit})`,
      })
      .option('mart-layout', {
        type: 'string',
        choices: ['file', 'months', 'both'],
        describe:
          'how a mart built by months is exported: one file (marts/<mart>.parquet, rewritten whole), a folder of ' +
          'month files (marts/<mart>/<YYYY-MM>.parquet, only the months that changed rewritten), or both ' +
          `(default PERKS_MART_LAYOUT, else ${DEFAULTS.build.martLayout})`,
      })
      .option('full', {
        type: 'boolean',
        describe: 'rebuild every model whole, incremental ones too (default: only their dirty months)',
      })
      .option('verify-incremental', {
        type: 'boolean',
        describe:
          'then build everything whole in a scratch folder and compare every table row for row; on a difference ' +
          'exit 1 naming the table and a row (the full build is kept)',
      })
      .option('quiet', QUIET)
      .example('$0 build', 'build from ./output/lake')
      .example(
        '$0 build --as-of 2026-03-31 --dormant-days 120',
        'engagement as of a past day, with a longer dormant window',
      ),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const segments = {
        newDays: days('new-days', argv['new-days']),
        activeDays: days('active-days', argv['active-days']),
        dormantDays: days('dormant-days', argv['dormant-days']),
      };
      const output = outputOf(argv);
      const outDir = output.dir;
      const lineage = Lineage.of(config, output);
      return lineage.around('build', async (run) => {
        const lock = await acquireLock(outDir);
        const startedAt = now();
        try {
          await finishSwitch(outDir); // a compaction killed mid-switch: its month is read once, not twice
          const result = await buildWarehouse(
            {
              output,
              asOf: argv['as-of'],
              memoryLimit: argv['memory-limit'] ?? config.buildMemoryLimit,
              martLayout: (argv['mart-layout'] as MartLayout | undefined) ?? config.martLayout,
              revenueStatuses: [...config.revenueStatuses],
              full: argv.full ?? false,
              verifyIncremental: argv['verify-incremental'] ?? false,
              segments: Object.fromEntries(Object.entries(segments).filter(([, v]) => v !== undefined)),
            },
            { onStep: argv.quiet ? undefined : (s) => process.stderr.write(`${formatStep(s)}\n`) },
          );
          run.ending = lineage.buildEnding(run.job, result, startedAt);
          process.stdout.write(formatBuildSummary(result));
          return !result.ok ? ExitCode.failed : result.warnings.length ? ExitCode.partial : ExitCode.success;
        } finally {
          await lock.release();
        }
      });
    }),
};

export function formatStep(s: StepResult): string {
  const unit = s.kind === 'test' ? 'failing' : s.kind === 'lake' ? 'files' : 'rows';
  const rows = s.rows === null ? '' : `${s.rows.toLocaleString('en-GB')} ${unit}`;
  const scope = s.latestSnapshots
    ? ` (read through each group's latest snapshot: ${s.latestSnapshots.map((l) => `${l.view} ${l.files} of ${l.of} files`).join(', ')})`
    : s.testedIntervals !== undefined
      ? ` (on the ${s.testedIntervals} group-months rebuilt)`
      : s.deferred
        ? ' (not computed: nothing it reads changed; a rebuilt model reading it computes it)'
        : s.kept
          ? s.kind === 'test'
            ? ' (passed at the previous build: nothing it reads changed)'
            : s.kind === 'export'
              ? ' (kept: the rows it holds are unchanged)'
              : ' (kept: nothing it reads changed)'
          : '';
  return `  ${s.status.padEnd(7)} ${(s.ms / 1000).toFixed(1).padStart(6)} s  ${rows.padStart(18)}  ${s.name}${scope}`;
}

export function formatBuildSummary(r: BuildResult): string {
  const count = (kind: StepResult['kind']) => r.steps.filter((s) => s.kind === kind && s.status === 'success').length;
  const verifyFailed = r.steps.some((s) => s.name === 'verify incremental' && s.status === 'error');
  const lines = r.ok
    ? [
        `build as of ${r.asOf}: ${count('model')} models${describeKept(r.steps, 'model')}, ` +
          `${count('test')} data tests passed${describeKept(r.steps, 'test')}, ${r.marts.length} marts exported${describeKept(r.steps, 'export')}`,
        `  ${r.warehouse}`,
        ...r.marts.map((m) => `  ${m}`),
      ]
    : [
        verifyFailed
          ? `build as of ${r.asOf} FAILED its check against a full build`
          : `build as of ${r.asOf} FAILED; the previous warehouse and marts are unchanged`,
        `  ${r.error}${r.impact ?? ''}`,
      ];
  for (const s of r.steps) {
    if (s.intervals && s.status === 'success') lines.push(`  ${describeIntervals(s.name, s.intervals)}`);
    if (s.monthFiles && s.status === 'success') lines.push(`  ${describeMonthFiles(s.name, s.monthFiles)}`);
  }
  if (r.steps.some((s) => s.name === 'verify incremental' && s.status === 'success'))
    lines.push('  verified: every table equals a full build, row for row');
  for (const w of r.warnings) lines.push(`  ${w}`);
  const skipped = r.steps.filter((s) => s.status === 'skipped').length;
  if (skipped) lines.push(`  ${skipped} steps skipped after the failure`);
  return `${lines.join('\n')}\n`;
}
