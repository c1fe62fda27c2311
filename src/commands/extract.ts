/** `perks extract`: lands every stream (or the named ones and what they need) incrementally in the lake. */
import type { CommandModule } from 'yargs';
import { isRealDay } from '../shared/checks.js';
import { extract, formatPlan, parseShard, unsharedLimitWarning, formatExtractSummary } from '../extract/index.js';
import { STREAM_NAMES, type StreamName } from '../../pipelines/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { forgetAnonymised } from '../forget/index.js';
import { compactLake } from '../compact/index.js';
import { alertExtract, alertOnThrow, alertSummaryLines } from '../alerts/index.js';
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
import { DEFAULTS } from '../config/index.js';
import { extractDatasets, Lineage, type CommandRun } from '../lineage/index.js';

interface ExtractFlags extends ApiFlags {
  streams?: string;
  'start-date'?: string;
  'end-date'?: string;
  'full-refresh'?: boolean;
  'budget-minutes'?: number;
  plan?: boolean;
  quiet?: boolean;
  progress?: string;
  shard?: string;
  'shard-wait-minutes'?: number;
  'refresh-days'?: string;
  'quarantine-threshold'?: string;
  'accept-changes'?: boolean;
}

export function parseStreams(value: string | undefined): StreamName[] | undefined {
  if (!value) return undefined;
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!(STREAM_NAMES as readonly string[]).includes(n))
      throw new ConfigError(`--streams: unknown stream "${n}"; known streams: ${STREAM_NAMES.join(', ')}`);
  }
  return names as StreamName[];
}

export function checkDay(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // A real calendar day: 2026-02-30 is refused, not read as 2 March; 2026-1-1 is refused, not a RangeError.
  if (!isRealDay(value))
    throw new ConfigError(`--${flag}=${JSON.stringify(value)} is invalid: expected a date YYYY-MM-DD`);
  return value;
}

export const extractCommand: CommandModule<object, ExtractFlags> = {
  command: 'extract',
  describe: 'Extract every stream (or --streams) incrementally into <out>/lake as Parquet',
  builder: (y) =>
    withApiOptions(y)
      .option('streams', { type: 'string', describe: `comma-separated: ${STREAM_NAMES.join(', ')}` })
      .option('start-date', { type: 'string', describe: 'backfill from this local day (YYYY-MM-DD)' })
      .option('end-date', { type: 'string', describe: 'backfill up to this local day, exclusive (YYYY-MM-DD)' })
      .option('full-refresh', { type: 'boolean', describe: 'ignore the state and start over from PERKS_START_DATE' })
      .option('budget-minutes', BUDGET_MINUTES)
      .option('plan', {
        type: 'boolean',
        describe: 'print the plan and estimated calls of this worker (its --shard and --groups), without extracting',
      })
      .option('quiet', QUIET)
      .option('progress', progressOption('json'))
      .option('shard', {
        type: 'string',
        describe:
          'K/N: this worker refreshes the users of shard K of N; shard 1 also lands the other streams (docs/scale-out.md)',
      })
      .option('refresh-days', {
        type: 'string',
        describe: `refresh every user's credit and interactions at least every N days, budget allowing (PERKS_REFRESH_DAYS, default ${DEFAULTS.refreshDays})`,
      })
      .option('quarantine-threshold', {
        type: 'string',
        describe:
          'share of quarantined records above which the run ends partial, exit 4: a fraction, 0.001 = 0.1% ' +
          `(PERKS_QUARANTINE_THRESHOLD, default ${DEFAULTS.quarantineThreshold})`,
      })
      .option('shard-wait-minutes', {
        type: 'number',
        describe: `how long shards 2..N wait for shard 1 to land the day's users and windows (default ${DEFAULTS.extract.shardWaitMinutes})`,
      })
      .option('accept-changes', ACCEPT_CHANGES)
      .example('$0 extract --streams orders', 'orders (and the groups they need)')
      .example('$0 extract --start-date 2026-01-01 --end-date 2026-02-01 --streams orders', 'backfill January')
      .example('$0 extract --shard 2/4', 'one of four workers sharing one output directory (and PERKS_REDIS_URL)')
      .example('$0 extract --groups 11,12', 'a worker for groups 11 and 12 only'),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv); // --refresh-days, --quarantine-threshold over their variables
      const startDate = checkDay('start-date', argv['start-date']);
      const endDate = checkDay('end-date', argv['end-date']);
      if (startDate && endDate && startDate >= endDate) throw new ConfigError('--start-date must be before --end-date');
      const budget = argv['budget-minutes'];
      if (budget !== undefined && !(budget >= 0))
        throw new ConfigError('--budget-minutes must be a number of minutes, 0 or more');
      const wait = argv['shard-wait-minutes'];
      if (wait !== undefined && !(wait >= 0))
        throw new ConfigError('--shard-wait-minutes must be a number of minutes, 0 or more');
      const shard = parseShard(argv.shard);
      const warning = argv.plan ? undefined : unsharedLimitWarning(shard, config.redisUrl);
      if (warning) process.stderr.write(`perks: ${warning}\n`); // even --quiet: it is not progress
      // lineage: START once the extract has its run id (its manifest's), the end with what it landed (not for --plan)
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output, undefined, !argv.plan);
      return lineage.around('extract', (run) => work(run), { deferStart: true });
      async function work(run: CommandRun): Promise<number> {
        const progress = progressFromFlags(argv, 'json');
        const result = await alertOnThrow(config, output, 'perks extract', () =>
          extract(config, {
            output,
            streams: parseStreams(argv.streams),
            startDate,
            endDate,
            fullRefresh: argv['full-refresh'],
            budgetMinutes: budget,
            planOnly: argv.plan,
            shard,
            shardWaitMinutes: wait,
            acceptChanges: argv['accept-changes'],
            // --groups on the command line makes this worker one slice of the organisation (work-lock.ts).
            groupSlice: argv.groups !== undefined,
            emit: (e) => {
              if (e.event === 'run') run.begin(String(e.run_id));
              progress(e);
            },
            // Users anonymised upstream leave the older snapshots and windows of the lake too, under this
            // run's lock, whatever else failed. A shard or group slice clears its own groups' lake files;
            // quarantine and the erasure queue's bookkeeping wait for a whole run (perks run, perks extract
            // or perks forget --anonymised), since other workers may be writing them.
            afterLanding: async (r) => {
              const sliced = shard !== undefined || argv.groups !== undefined;
              if (sliced && !r.streams.some((s) => s.name === 'users')) return; // shards 2..N land no users
              await forgetAnonymised(output, {
                lock: false,
                groups: sliced ? r.groups.map((g) => g.id) : undefined,
              });
            },
          }),
        );
        const failed = result.streams.filter((s) => s.status === 'error').map((s) => `${s.name}: ${s.error}`);
        run.ending = { io: () => extractDatasets(lineage.place, result), error: failed.join('; ') || undefined };
        if (result.plan) {
          process.stdout.write(formatPlan(result.plan, Number(config.rateLimit)));
          return result.exitCode;
        }
        process.stdout.write(formatExtractSummary(result));
        // The failure also reaches stderr, so a --quiet run in a scheduler still says what went wrong.
        for (const s of result.streams)
          if (s.status === 'error') process.stderr.write(`perks: ${s.name}: ${s.error}\n`);
        if (result.quarantine?.message) process.stderr.write(`perks: ${result.quarantine.message}\n`);
        if (result.heldMessage) process.stderr.write(`perks: ${result.heldMessage}\n`);
        for (const line of alertSummaryLines(await alertExtract(config, output, result)))
          process.stdout.write(`  ${line}\n`);
        // Closed months become one file per group and month (src/compact), after the forget step. A shard or
        // group slice leaves it to the final step (perks run, or perks compact): it takes the whole output directory.
        if (result.status !== 'error' && argv.shard === undefined && argv.groups === undefined)
          await compactLake(output, { lookbackDays: config.lookbackDays });
        return result.exitCode;
      }
    }),
};
