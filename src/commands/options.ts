/** CLI options shared by the commands that talk to the API or the output directory. */
import type { Argv } from 'yargs';
import { loadConfig, type Config } from '../config/index.js';

export function withApiOptions<T>(y: Argv<T>) {
  return y
    .option('base-url', { type: 'string', describe: 'API base address (PERKS_BASE_URL)' })
    .option('client-id', { type: 'string', describe: 'client id (PERKS_CLIENT_ID)' })
    .option('client-secret', {
      type: 'string',
      describe: 'client secret (PERKS_CLIENT_SECRET); prefer the environment',
    })
    .option('scope', { type: 'string', describe: 'token scope (PERKS_SCOPE, default *)' })
    .option('groups', { type: 'string', describe: 'organisation_group_id values, comma-separated (PERKS_GROUP_IDS)' })
    .option('rate-limit', {
      type: 'string',
      describe: 'calls per minute per credential (PERKS_RATE_LIMIT, default 120)',
    })
    .option('credit-path', { type: 'string', describe: 'path of the user credit operation (PERKS_CREDIT_PATH)' })
    .option('output', { alias: 'o', type: 'string', describe: 'output directory (PERKS_OUTPUT, default ./output)' });
}

export interface ApiFlags {
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  groups?: string;
  rateLimit?: string;
  creditPath?: string;
  output?: string;
  startDate?: string;
  lookbackDays?: number;
}

/** `more`: a command's own setting flags (e.g. extract's --refresh-days), overriding their variables too. */
export function configFromFlags(argv: ApiFlags, more: Partial<Record<keyof Config, unknown>> = {}): Config {
  return loadConfig(process.env, {
    ...more,
    baseUrl: argv.baseUrl,
    clientId: argv.clientId,
    clientSecret: argv.clientSecret,
    scope: argv.scope,
    groupIds: argv.groups,
    rateLimit: argv.rateLimit,
    creditPath: argv.creditPath,
    output: argv.output,
    startDate: argv.startDate,
    lookbackDays: argv.lookbackDays,
  });
}
