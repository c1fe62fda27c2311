/**
 * CLI options shared by several commands, declared once, their help reading the defaults from src/config;
 * and the one way flags become the configuration (configFromFlags, once per command).
 */
import type { Argv } from 'yargs';
import { configFrom, DEFAULTS, type Config, type OutputSetting } from '../config/index.js';
import { allowanceText } from '../extract/index.js';
import type { Output } from '../output/index.js';
import type { StoreSession } from '../store/index.js';
import { PROGRESS_MODES, progressMode, progressReporter, type Event, type ProgressMode } from '../extract/index.js';

/**
 * `--output` / `-o`, declared once for every command (src/cli.ts); the middleware resolves it, once, into the
 * Output the handlers read (`argv.resolvedOutput`, through outputOf).
 */
export const OUTPUT = {
  alias: 'o',
  type: 'string',
  describe: `the output: a folder, or a store s3://bucket/prefix (PERKS_OUTPUT, default ${DEFAULTS.output})`,
} as const;

/** `.option('quiet', QUIET)`: no progress on stderr (the summary still goes to stdout). */
export const QUIET = { type: 'boolean', describe: 'no progress output (--progress none)' } as const;

/**
 * `.option('progress', progressOption('json'))`: how progress reaches stderr (src/extract/progress.ts); the default
 * is a bar on a terminal and `offTerminal` elsewhere (json for the scheduled commands, lines for the demo).
 */
export const progressOption = (offTerminal: ProgressMode) =>
  ({
    type: 'string',
    choices: PROGRESS_MODES,
    describe:
      'progress on stderr: bar (updating lines), lines (one per stream finished), json (one per event, for ' +
      `machines) or none (default: bar on a terminal, else ${offTerminal})`,
  }) as const;

/** The progress reporter a command's flags ask for (--quiet, --progress), on stderr. */
export const progressFromFlags = (
  argv: { quiet?: boolean; progress?: string },
  offTerminal: ProgressMode,
): ((e: Event) => void) =>
  progressReporter(
    process.stderr,
    progressMode(
      process.stderr,
      { quiet: argv.quiet, progress: argv.progress as ProgressMode | undefined },
      offTerminal,
    ),
  );

/** `.option('group', GROUP_FILTER)`: one organisation_group_id, for the commands that otherwise take every group. */
export const GROUP_FILTER = { type: 'string', describe: 'one organisation_group_id (default: every group)' } as const;

/** `.option('budget-minutes', BUDGET_MINUTES)`: the per-user streams' share of the run (extract, run). */
export const BUDGET_MINUTES = {
  type: 'number',
  describe: `call budget of the per-user streams, in minutes at the rate limit (default ${DEFAULTS.extract.budgetMinutes})`,
} as const;

/** `perks extract` / `perks run`: apply what the settled-change guard would hold (src/extract/windows/settled-guard.ts). */
export const ACCEPT_CHANGES = {
  type: 'boolean',
  describe:
    'apply a re-read of a final month even when it removes or changes more than the guard allows ' +
    `(${allowanceText()}): after checking the API is the right one`,
} as const;

/** The flags that reach the API (the settings of src/config a command line may override), and --output. */
export function withApiOptions<T>(y: Argv<T>) {
  return y
    .option('base-url', { type: 'string', describe: 'API base address (PERKS_BASE_URL)' })
    .option('client-id', { type: 'string', describe: 'client id (PERKS_CLIENT_ID)' })
    .option('client-secret', {
      type: 'string',
      describe: 'client secret (PERKS_CLIENT_SECRET); prefer the environment',
    })
    .option('scope', { type: 'string', describe: `token scope (PERKS_SCOPE, default ${DEFAULTS.scope})` })
    .option('groups', { type: 'string', describe: 'organisation_group_id values, comma-separated (PERKS_GROUP_IDS)' })
    .option('rate-limit', {
      type: 'string',
      describe: `calls per minute per credential (PERKS_RATE_LIMIT, default ${DEFAULTS.rateLimit})`,
    })
    .option('credit-path', { type: 'string', describe: 'path of the user credit operation (PERKS_CREDIT_PATH)' });
}

/** What the middleware resolved for a command (src/cli.ts): its output, and the store session behind it. */
export interface OutputFlags {
  output?: string;
  /** The output setting as given (value and source), for a command with no Output (`perks store check`). */
  outputSetting?: OutputSetting;
  /** The command's output (store/lazy.ts): where it reads and writes, the only place its stages are told of. */
  resolvedOutput?: Output;
  /** The store's session when the output is a store (`perks check` and `perks store push` read it). */
  storeSession?: StoreSession;
}

/** The command's output, resolved by the middleware (src/cli.ts) before any handler runs. */
export function outputOf(argv: OutputFlags): Output {
  // none: not run through src/cli.ts, or a command given a store's URL that has no output (store/lazy.ts)
  if (!argv.resolvedOutput) throw new Error('the output was not resolved for this command (src/cli.ts, store/lazy.ts)');
  return argv.resolvedOutput;
}

export interface ApiFlags extends OutputFlags {
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  groups?: string;
  rateLimit?: string;
  creditPath?: string;
  /** The settings, parsed once per command by configFromFlags (with a store, already in the middleware). */
  settings?: Config;
  startDate?: string;
  lookbackDays?: number;
}

/** A command's own setting flags, over their variables (`perks extract --refresh-days` over PERKS_REFRESH_DAYS, …). */
const SETTING_FLAGS = {
  'refresh-days': 'refreshDays',
  'quarantine-threshold': 'quarantineThreshold',
  'writeback-limit': 'writebackLimit',
} as const satisfies Record<string, keyof Config>;

/**
 * The configuration: the environment, with the flags given on the command line over it (a command's own setting
 * flags among them), parsed once per command and kept on `argv`: a later call (the handler's, after the
 * middleware's for a store) gets the same settings. The output is not among them: outputOf.
 */
export function configFromFlags(argv: ApiFlags): Config {
  if (argv.settings) return argv.settings;
  const own = Object.fromEntries(
    Object.entries(SETTING_FLAGS).map(([flag, key]) => [key, (argv as Record<string, unknown>)[flag]]),
  );
  argv.settings = configFrom({
    ...own,
    baseUrl: argv.baseUrl,
    clientId: argv.clientId,
    clientSecret: argv.clientSecret,
    scope: argv.scope,
    groupIds: argv.groups,
    rateLimit: argv.rateLimit,
    creditPath: argv.creditPath,
    startDate: argv.startDate,
    lookbackDays: argv.lookbackDays,
  });
  return argv.settings;
}
