/**
 * The settings the stages, the store and the CI read besides the API's: fields of the one ConfigSchema
 * (src/config/index.ts spreads them in), each parsed and checked here, its default from DEFAULTS. Values a
 * stage needs are handed to it by its caller; no stage reads the environment.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults.js';
import { REVENUE_STATUSES_MESSAGE, splitStatuses } from './revenue-statuses.js';
import { isTypeMap, parseTypeMap, TYPE_MAP_MESSAGE } from './writeback-types.js';

const MARTS = ['file', 'months', 'both'] as const;

/** A flag-like switch: 1 or true on, 0 or false off. */
const onOff = (message: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => ['1', 'true', '0', 'false'].includes(v), message)
    .transform((v) => v === '1' || v === 'true');

export const STAGE_SETTINGS = {
  /** DuckDB's memory limit for a build (`perks build --memory-limit` over it). */
  buildMemoryLimit: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?\s*[KMGT]i?B$/i, 'expected a size such as 1GB')
    .default(DEFAULTS.build.memoryLimit),
  /** How a mart built by months is exported (`perks build --mart-layout` over it). */
  martLayout: z
    .string()
    .trim()
    .refine((v) => (MARTS as readonly string[]).includes(v), 'expected file, months or both')
    .transform((v) => v as (typeof MARTS)[number])
    .default(DEFAULTS.build.martLayout),
  /** The order statuses that are recognised revenue (comma-separated). */
  revenueStatuses: z
    .string()
    .refine((s) => !splitStatuses(s).includes(''), REVENUE_STATUSES_MESSAGE)
    .transform((s) => [...new Set(splitStatuses(s))] as readonly string[])
    .default([...DEFAULTS.revenueStatuses]),
  /** A CSV `month,currency,rate`: read by the report and the close (src/closes/fx-rates.ts), which check it. */
  fxRates: z.string().optional(),
  /** The currency PERKS_FX_RATES converts into (checked with the rates: it is needed only with them). */
  reportingCurrency: z.string().optional(),
  /** Who `perks close` / `perks reopen` record without --by; unset, the login name. */
  operator: z.string().trim().min(1, 'must not be blank').optional(),
  /** kind → interaction_type for the write-back. */
  writebackTypes: z.string().refine(isTypeMap, TYPE_MAP_MESSAGE).transform(parseTypeMap).default({}),
  /** `perks status` thresholds, as given (`26h`): src/status reads durations, naming the flag or the variable. */
  warnAfter: z.string().optional(),
  errorAfter: z.string().optional(),
  /** A store's working copy; unset, one folder per store under XDG_CACHE_HOME (else ~/.cache). */
  cacheDir: z.string().min(1).optional(),
  xdgCacheHome: z.string().optional(),
  /** The AWS SDK's own settings the store names and configures its client with (the SDK reads its credentials). */
  awsEndpointUrlS3: z.string().optional(),
  awsEndpointUrl: z.string().optional(),
  awsRegion: z.string().optional(),
  awsDefaultRegion: z.string().optional(),
  /** Never printed: registered with the redaction so that no message shows them. */
  awsSecretAccessKey: z.string().optional(),
  awsSessionToken: z.string().optional(),
  /** Path-style addressing forced (automatic for an IP address or localhost). */
  s3PathStyle: onOff('expected 1 or true (path-style addressing), 0 or false').default(false),
  /** A failure's stack on stderr (redacted), for a developer: any value but 0 and false. */
  debug: z
    .string()
    .transform((v) => !['0', 'false'].includes(v.trim().toLowerCase()))
    .default(false),
  /** The CI's step summary file (GitHub Actions): `perks run` appends its summary there. */
  stepSummary: z.string().optional(),
  /** The Chromium `--format pdf` prints with (src/report/render/pdf.ts checks it is executable); unset, one is looked for. */
  chromium: z.string().trim().optional(),
};

export const STAGE_ENV_NAMES = {
  buildMemoryLimit: 'PERKS_BUILD_MEMORY_LIMIT',
  martLayout: 'PERKS_MART_LAYOUT',
  revenueStatuses: 'PERKS_REVENUE_STATUSES',
  fxRates: 'PERKS_FX_RATES',
  reportingCurrency: 'PERKS_REPORTING_CURRENCY',
  operator: 'PERKS_OPERATOR',
  writebackTypes: 'PERKS_WRITEBACK_TYPES',
  warnAfter: 'PERKS_WARN_AFTER',
  errorAfter: 'PERKS_ERROR_AFTER',
  cacheDir: 'PERKS_CACHE_DIR',
  xdgCacheHome: 'XDG_CACHE_HOME',
  awsEndpointUrlS3: 'AWS_ENDPOINT_URL_S3',
  awsEndpointUrl: 'AWS_ENDPOINT_URL',
  awsRegion: 'AWS_REGION',
  awsDefaultRegion: 'AWS_DEFAULT_REGION',
  awsSecretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  awsSessionToken: 'AWS_SESSION_TOKEN',
  s3PathStyle: 'PERKS_S3_PATH_STYLE',
  debug: 'PERKS_DEBUG',
  stepSummary: 'GITHUB_STEP_SUMMARY',
  chromium: 'PERKS_CHROMIUM',
} as const satisfies Record<keyof typeof STAGE_SETTINGS, string>;

/** Settings whose value a message never shows. */
export const HIDDEN_SETTINGS: readonly string[] = ['awsSecretAccessKey', 'awsSessionToken'];
