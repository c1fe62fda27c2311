/**
 * Configuration: environment variables, overridden by CLI flags, validated once at the entry point.
 * Defaults live here and nowhere else (defaults.ts).
 */
import { z } from 'zod';
import { ConfigError } from '../shared/exit-codes.js';
import { isRealDay, isSafeId } from '../shared/checks.js';
import { DEFAULTS } from './defaults.js';
import { HIDDEN_SETTINGS, STAGE_ENV_NAMES, STAGE_SETTINGS } from './stage-settings.js';
import { LINEAGE_ENV_NAMES, LINEAGE_SETTINGS } from './lineage-settings.js';

export { DEFAULTS };
export { revenueStatusesFrom } from './revenue-statuses.js';
export { parseTypeMap, TYPES_ENV, type TypeMap } from './writeback-types.js';
export { checkedOutputPath, debugWanted, outputSetting, quietAwsSdk, type OutputSetting } from './environment.js';
export { lineageTransportOf, type LineageTransport } from './lineage-settings.js';

const intList = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, { message: 'expected comma-separated group ids, e.g. 11,12', abort: true })
  // 9007199254740993 is no id JavaScript holds exactly (it would become another group, or Infinity)
  .refine((s) => s.split(',').every(isSafeId), {
    message: 'expected group ids, whole numbers from 1 to 9007199254740991',
    abort: true,
  })
  .transform((s) => s.split(',').map((v) => Number.parseInt(v.trim(), 10)))
  // A group listed twice would be planned and landed twice by the same run.
  .refine((ids) => new Set(ids).size === ids.length, 'a group id is listed twice');

/**
 * The API's base URL. Operation paths are appended to it as text, so a query, a fragment or a user and
 * password would end up in the wrong place (fetch refuses credentials in a URL): refused here, up front.
 */
const baseUrl = z
  .string()
  .trim()
  .refine((u) => /^https?:\/\/[^/?#]/i.test(u) && URL.canParse(u), {
    message: 'expected an http(s) URL, e.g. https://api.example.com',
    abort: true, // the checks below read it as a URL
  })
  .refine((u) => !/[?#]/.test(u), 'expected no query (?) or fragment (#): operation paths are appended to it')
  .refine((u) => !new URL(u).username && !new URL(u).password, 'expected no user or password in the URL');

/** An IANA zone the runtime knows: Intl throws a RangeError for any other (e.g. Mars/Olympus). */
const timeZone = z
  .string()
  .trim()
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return tz !== '';
    } catch {
      return false;
    }
  }, 'expected an IANA time zone, e.g. UTC or Europe/London');

const positiveInt = (what: string) =>
  z.coerce
    .number({ error: `expected ${what}` })
    .int(`expected ${what}`)
    .positive(`expected ${what}`);

const QUARANTINE_MESSAGE = `expected a fraction from 0 to 1, e.g. ${DEFAULTS.quarantineThreshold} for ${DEFAULTS.quarantineThreshold * 100}% (the default)`;

/** A whole number of `unit` within [min, max], its default named in the message. */
function wholeNumber(unit: string, min: number, max: number, fallback: number) {
  const message = `expected a whole number of ${unit}, ${min} to ${max} (default ${fallback})`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message)
    .default(fallback);
}

export const ConfigSchema = z.object({
  baseUrl: baseUrl.optional(),
  clientId: z
    .string()
    .refine(isSafeId, 'expected an integer client id, a whole number above 0')
    .transform(Number)
    .optional(),
  clientSecret: z.string().min(1, 'must not be empty').optional(),
  scope: z.string().trim().min(1, 'must not be blank').default(DEFAULTS.scope),
  groupIds: intList.optional(),
  rateLimit: positiveInt('calls per minute, a whole number above 0').default(DEFAULTS.rateLimit),
  creditPath: z
    .string()
    .refine((p) => p.startsWith('/') && p.includes('{identifier}') && p.includes('{identifier_value}'), {
      message:
        'expected a path with {identifier} and {identifier_value}, e.g. /v3/user/credit/{identifier}/{identifier_value}',
    })
    .default(DEFAULTS.creditPath),
  // Date.parse alone rolls 2026-02-30 over to March 2nd, and reads 2026-1-1 as a local day
  startDate: z.string().refine(isRealDay, 'expected a real calendar date YYYY-MM-DD').optional(),
  lookbackDays: z.coerce
    .number({ error: 'expected a whole number of days' })
    .int()
    .min(0)
    .max(366)
    .default(DEFAULTS.lookbackDays),
  /** Every N days the orders extract re-reads the open and the previous month whole (late refunds); 0: never. */
  deepRereadDays: z.coerce
    .number({ error: 'expected a whole number of days (0: never)' })
    .int('expected a whole number of days (0: never)')
    .min(0)
    .max(366)
    .default(DEFAULTS.deepRereadDays),
  /** Shared rate limiter across processes (Bottleneck clustering); may hold a password, never printed. */
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\/[^/]/, 'expected redis://[:password@]host:port[/db] or rediss://…')
    .refine((u) => URL.canParse(u), 'expected redis://[:password@]host:port[/db] or rediss://…')
    .optional(),
  /** An output in object storage: a writer's lease lasts this long after its last heartbeat. */
  storeLeaseSeconds: wholeNumber('seconds', 10, 3600, DEFAULTS.store.leaseSeconds),
  /** While an extract runs, what it committed is published every N seconds (0: only at the end)… */
  storeCheckpointSeconds: wholeNumber('seconds', 0, 86_400, DEFAULTS.store.checkpointSeconds),
  /** …or every N MB landed, whichever comes first (0: no size bound). */
  storeCheckpointMb: wholeNumber('MB', 0, 1_000_000, DEFAULTS.store.checkpointMb),
  /** The timezone the API reads order_created_from/to in (not shown in the spec; UTC by default). */
  apiTimezone: timeZone.default(DEFAULTS.apiTimezone),
  /** Every user's per-user streams (credit, interactions) are refreshed at least every N days, budget allowing. */
  refreshDays: z
    .string()
    .trim()
    .regex(/^\d+$/, `expected a whole number of days, 1 or more (default ${DEFAULTS.refreshDays})`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= 3650, `expected a whole number of days, 1 or more (default ${DEFAULTS.refreshDays})`)
    .default(DEFAULTS.refreshDays),
  /** Share of quarantined records above which an extract ends partial (exit 4). */
  quarantineThreshold: z
    .string()
    .trim()
    .regex(/^(\d+(\.\d*)?|\.\d+)$/, QUARANTINE_MESSAGE)
    .transform(Number)
    .refine((n) => n <= 1, QUARANTINE_MESSAGE)
    .default(DEFAULTS.quarantineThreshold),
  /** Posts of one write-back at most (the rest wait for the next run); none: no cap. */
  writebackLimit: z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number of rows, 0 or more')
    .transform(Number)
    .optional(),
  /**
   * Webhook URLs for alerts, separated by commas or blanks. Kept as given: src/alerts checks each one, since
   * a malformed URL must not stop the data refresh (it is named in the summary instead). Never printed.
   */
  alertWebhook: z.string().optional(),
  /** The body alerts are posted as: json, or slack (`{"text": …}`); unset, slack for hooks.slack.com, else json. */
  alertFormat: z.enum(['json', 'slack'], { error: 'expected json or slack' }).optional(),
  /** Seconds one alert post may take before it is given up (it is tried 3 times). */
  alertTimeout: z.coerce
    .number({ error: 'expected a number of seconds above 0, at most 60' })
    .positive('expected a number of seconds above 0, at most 60')
    .max(60, 'expected a number of seconds above 0, at most 60')
    .default(5),
  /** Write-back rows rejected or pending above which an alert is sent. */
  alertBacklog: z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number of rows, 0 or more (default 0)')
    .transform(Number)
    .default(0),
  ...STAGE_SETTINGS,
  ...LINEAGE_SETTINGS,
});
export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** Environment variable behind each field, for messages and docs. */
export const ENV_NAMES: Record<keyof Config, string> = {
  baseUrl: 'PERKS_BASE_URL',
  clientId: 'PERKS_CLIENT_ID',
  clientSecret: 'PERKS_CLIENT_SECRET',
  scope: 'PERKS_SCOPE',
  groupIds: 'PERKS_GROUP_IDS',
  rateLimit: 'PERKS_RATE_LIMIT',
  creditPath: 'PERKS_CREDIT_PATH',
  startDate: 'PERKS_START_DATE',
  lookbackDays: 'PERKS_LOOKBACK_DAYS',
  deepRereadDays: 'PERKS_DEEP_REREAD_DAYS',
  redisUrl: 'PERKS_REDIS_URL',
  storeLeaseSeconds: 'PERKS_STORE_LEASE_SECONDS',
  storeCheckpointSeconds: 'PERKS_STORE_CHECKPOINT_SECONDS',
  storeCheckpointMb: 'PERKS_STORE_CHECKPOINT_MB',
  apiTimezone: 'PERKS_API_TIMEZONE',
  writebackLimit: 'PERKS_WRITEBACK_LIMIT',
  refreshDays: 'PERKS_REFRESH_DAYS',
  quarantineThreshold: 'PERKS_QUARANTINE_THRESHOLD',
  alertWebhook: 'PERKS_ALERT_WEBHOOK',
  alertFormat: 'PERKS_ALERT_FORMAT',
  alertTimeout: 'PERKS_ALERT_TIMEOUT',
  alertBacklog: 'PERKS_ALERT_BACKLOG',
  ...STAGE_ENV_NAMES,
  ...LINEAGE_ENV_NAMES,
};

/** What the store reads of the settings: its working copy's place and the AWS SDK's settings it names. */
export type StoreSettings = Pick<
  Config,
  | 'cacheDir'
  | 'xdgCacheHome'
  | 'awsEndpointUrlS3'
  | 'awsEndpointUrl'
  | 'awsRegion'
  | 'awsDefaultRegion'
  | 'awsSecretAccessKey'
  | 'awsSessionToken'
  | 's3PathStyle'
>;

/** The values as given, before the schema: each variable, a flag over it; and which keys a flag gave. */
function rawSettings(env: NodeJS.ProcessEnv, overrides: Partial<Record<keyof Config, unknown>>) {
  const raw: Record<string, unknown> = {};
  const flagged = new Set<keyof Config>();
  // the output is no setting of these: outputSetting reads it, the middleware makes it the command's Output (src/output)
  for (const [key, name] of Object.entries(ENV_NAMES) as [keyof Config, string][]) {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '') raw[key] = fromEnv;
    const fromFlag = overrides[key] as string | number | boolean | readonly unknown[] | undefined;
    if (fromFlag !== undefined) {
      raw[key] = Array.isArray(fromFlag) ? fromFlag.join(',') : String(fromFlag);
      flagged.add(key);
    }
  }
  return { raw, flagged };
}

/** Reads the environment, applies flag overrides (undefined flags do not override), validates. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Config {
  const { raw, flagged } = rawSettings(env, overrides);
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue.path[0]) as keyof Config;
    const shown =
      key === 'clientSecret' || key === 'alertWebhook' || key === 'openlineageApiKey' || HIDDEN_SETTINGS.includes(key)
        ? '(hidden)'
        : key === 'redisUrl' || key === 'baseUrl' || key === 'openlineageUrl'
          ? JSON.stringify(withoutCredentials(String(raw[key])))
          : JSON.stringify(raw[key]);
    // Name what the user typed: the flag when the value came from one, else the variable.
    const source = flagged.has(key) ? (key === 'groupIds' ? '--groups' : `--${kebab(key)}`) : (ENV_NAMES[key] ?? key);
    throw new ConfigError(`${source}=${shown} is invalid: ${issue.message}`);
  }
  return parsed.data;
}

/** The program's settings: its environment, with the flags given on the command line over it. */
export function configFrom(overrides: Partial<Record<keyof Config, unknown>> = {}): Config {
  return loadConfig(process.env, overrides);
}

/** The fields a command talking to the API needs; a missing one is a one-line error naming the variable. */
export function requireApi(config: Config): Required<Pick<Config, 'baseUrl' | 'clientId' | 'clientSecret'>> & Config {
  for (const key of ['baseUrl', 'clientId', 'clientSecret'] as const) {
    if (config[key] === undefined) {
      throw new ConfigError(
        `${ENV_NAMES[key]} is not set: set it (or pass --${kebab(key)}) to reach the API, or run \`npm start\` for the embedded sandbox`,
      );
    }
  }
  return config as Required<Pick<Config, 'baseUrl' | 'clientId' | 'clientSecret'>> & Config;
}

/** A URL's user and password hidden, for messages: `redis://user:pw@host` → `redis://(hidden)@host`. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1(hidden)@');
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
