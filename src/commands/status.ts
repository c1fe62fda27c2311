/** `perks status`: freshness per stream and group, the write-back backlog, closed months; exit codes for schedulers. */
import type { CommandModule } from 'yargs';
import { now } from '../shared/clock.js';
import { ConfigError } from '../shared/exit-codes.js';
import {
  collectStatus,
  DEFAULT_ERROR_AFTER,
  DEFAULT_WARN_AFTER,
  FreshnessOptions,
  judge,
  statusJson,
  statusText,
} from '../status/index.js';
import { handle } from './handle.js';
import { alertsConfigured, alertStatus, alertSummaryLines } from '../alerts/index.js';
import { configFromFlags, outputOf, type OutputFlags } from './options.js';

interface StatusFlags extends OutputFlags {
  format?: string;
  'warn-after'?: string;
  'error-after'?: string;
  alert?: boolean;
}

export const WARN_ENV = 'PERKS_WARN_AFTER';
export const ERROR_ENV = 'PERKS_ERROR_AFTER';

/**
 * The thresholds from the flags, else the settings (PERKS_WARN_AFTER, PERKS_ERROR_AFTER, read by src/config),
 * else the defaults; a bad one is one line naming the flag or the variable (exit 2).
 */
export function freshnessOptions(
  flags: { warnAfter?: string; errorAfter?: string },
  settings: { warnAfter?: string; errorAfter?: string },
): FreshnessOptions {
  const sources = {
    warnAfterHours:
      flags.warnAfter !== undefined
        ? ['--warn-after', flags.warnAfter]
        : settings.warnAfter
          ? [WARN_ENV, settings.warnAfter]
          : ['--warn-after', DEFAULT_WARN_AFTER],
    errorAfterHours:
      flags.errorAfter !== undefined
        ? ['--error-after', flags.errorAfter]
        : settings.errorAfter
          ? [ERROR_ENV, settings.errorAfter]
          : ['--error-after', DEFAULT_ERROR_AFTER],
  } as const;
  const parsed = FreshnessOptions.safeParse({
    warnAfterHours: sources.warnAfterHours[1],
    errorAfterHours: sources.errorAfterHours[1],
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const [name, value] = sources[issue.path[0] as keyof typeof sources];
  throw new ConfigError(`${name}=${JSON.stringify(value)} is invalid: ${issue.message}`);
}

export const statusCommand: CommandModule<object, StatusFlags> = {
  command: 'status',
  describe:
    'Is the data fresh? Per stream and group: watermark, last success, age, rows, last run; write-back backlog; ' +
    "each month's state (partial, provisional, final, signed off)",
  builder: (y) =>
    y
      .option('format', { alias: 'f', type: 'string', describe: 'text or json', default: 'text' })
      .option('warn-after', {
        type: 'string',
        describe: `exit 4 when a stream's last success is older (${WARN_ENV}, default ${DEFAULT_WARN_AFTER})`,
      })
      .option('error-after', {
        type: 'string',
        describe: `exit 1 when older, or never extracted (${ERROR_ENV}, default ${DEFAULT_ERROR_AFTER})`,
      })
      .option('alert', {
        type: 'boolean',
        describe:
          'post what needs a person (stale data, write-back backlog, close record, erasure queue) to PERKS_ALERT_WEBHOOK, once a day per condition',
      })
      .example('$0 status --warn-after 26h --error-after 50h', 'fail a scheduler step when the data is stale')
      .example('$0 status --alert', 'hourly from another scheduler: hear of a refresh that stopped running')
      .example('$0 status --format json', 'for a monitor'),
  handler: (argv) =>
    handle(async () => {
      if (argv.format !== 'text' && argv.format !== 'json')
        throw new ConfigError(`--format=${JSON.stringify(argv.format)} is invalid: expected text or json`);
      const config = configFromFlags(argv);
      const options = freshnessOptions({ warnAfter: argv['warn-after'], errorAfter: argv['error-after'] }, config);
      if (argv.alert && !alertsConfigured(config))
        throw new ConfigError(
          '--alert: PERKS_ALERT_WEBHOOK is not set: set it to the webhook URL(s) to post to, or drop --alert',
        );
      // shown as given (./output), not the machine's absolute path (the status is shared), or as the store
      const output = outputOf(argv);
      const report = await collectStatus(output, config, now());
      const freshness = judge(report, options);
      process.stdout.write(
        argv.format === 'json' ? statusJson(report, freshness, options) : statusText(report, freshness, options),
      );
      if (freshness.message) process.stderr.write(`perks: ${freshness.message}\n`);
      // alerts are a side effect: the exit code stays the freshness verdict
      if (argv.alert)
        for (const line of alertSummaryLines(await alertStatus(config, output, report, freshness)))
          process.stderr.write(`perks: ${line}\n`);
      return freshness.exitCode;
    }),
};
