/**
 * Options of a build, checked once at the entry point, with their defaults, and the DuckDB variables the
 * models read them through (`getvariable('as_of')`, …), so the SQL stays plain DuckDB.
 */
import { z } from 'zod';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import { DEFAULTS, type Config } from '../../config/index.js';
import { ConfigError } from '../../shared/exit-codes.js';
import { isRealDay } from '../../shared/checks.js';
import { now, todayUtc } from '../../shared/clock.js';
import type { MartLayout } from '../export/export-marts.js';
import type { Output } from '../../output/index.js';

/** Engagement segment thresholds, in days (see docs/assumptions.md, ## Models). */
export const SegmentThresholds = z
  .object({
    /** new: created at most this many days before as-of. */
    newDays: z.number().int().positive().default(DEFAULTS.build.segments.newDays),
    /** active: last login or last order at most this many days before as-of. */
    activeDays: z.number().int().positive().default(DEFAULTS.build.segments.activeDays),
    /** dormant: last activity within this many days (but not active); churned beyond it. */
    dormantDays: z.number().int().positive().default(DEFAULTS.build.segments.dormantDays),
  })
  .refine((t) => t.activeDays <= t.dormantDays, {
    message: 'the active window must not exceed the dormant one (--dormant-days)',
    path: ['activeDays'],
  });
export type SegmentThresholds = z.infer<typeof SegmentThresholds>;

const isoDay = z.string().refine(isRealDay, 'expected a real calendar date');

/** An Output (output/output.ts: outputAt, or the command's middleware), taken as it is: its folder already absolute. */
const output = z.custom<Output>(
  (v) => typeof (v as Output | undefined)?.dir === 'string' && typeof (v as Output).state === 'function',
  'expected the output (outputAt)',
);

export const BuildOptions = z.object({
  /** Where the build reads the lake and writes the warehouse, marts, seed, docs and its record. */
  output,
  sqlDir: z.string().min(1).optional(),
  /** The day "now" is for the models (days since last login, last 30/90 days); default today (UTC). */
  asOf: isoDay.optional(),
  segments: SegmentThresholds.optional(),
  /** Every model built whole, whatever the previous build left (`perks build --full`). */
  full: z.boolean().default(false),
  /** Then a full build in a scratch folder, compared row for row (`perks build --verify-incremental`). */
  verifyIncremental: z.boolean().default(false),
  /**
   * DuckDB memory limit for the build, e.g. "1GB"; beyond it DuckDB spills to disk inside `<out>`. Default:
   * the built-in one (DEFAULTS.build.memoryLimit); a caller passes the settings' (buildSettingsOf).
   */
  memoryLimit: z
    .string()
    .regex(/^\d+(\.\d+)?\s*[KMGT]i?B$/i, 'expected a size such as 1GB')
    .optional(),
  /**
   * How a mart built by months is exported; default the built-in one (DEFAULTS.build.martLayout); a caller
   * passes the settings' (buildSettingsOf).
   */
  martLayout: z.enum(['file', 'months', 'both']).optional(),
  /** The order statuses that are recognised revenue (the marts' is_recognised); default Complete (DEFAULTS). */
  revenueStatuses: z
    .array(
      z
        .string()
        .min(1)
        .refine((s) => !s.includes(','), 'expected no comma'),
    )
    .min(1)
    .optional(),
});
export type BuildOptions = z.input<typeof BuildOptions>;
export type CheckedBuildOptions = z.infer<typeof BuildOptions> & {
  asOf: string;
  segments: SegmentThresholds;
  revenueStatuses: readonly string[];
  memoryLimit: string;
  martLayout: MartLayout;
};

/** The CLI flag behind an option, for messages. */
const FLAG_NAMES: Record<string, string> = {
  asOf: '--as-of',
  memoryLimit: '--memory-limit (or PERKS_BUILD_MEMORY_LIMIT)',
  martLayout: '--mart-layout (or PERKS_MART_LAYOUT)',
  'segments.newDays': '--new-days',
  'segments.activeDays': '--active-days',
  'segments.dormantDays': '--dormant-days',
  revenueStatuses: 'PERKS_REVENUE_STATUSES',
};

/** The settings a build's options default to (PERKS_BUILD_MEMORY_LIMIT, PERKS_MART_LAYOUT, PERKS_REVENUE_STATUSES). */
export type BuildSettings = Pick<Config, 'buildMemoryLimit' | 'martLayout' | 'revenueStatuses'>;

/** The built-in defaults (DEFAULTS), for a build whose caller passes neither the options nor its settings. */
const BUILT_IN: BuildSettings = {
  buildMemoryLimit: DEFAULTS.build.memoryLimit,
  martLayout: DEFAULTS.build.martLayout,
  revenueStatuses: [...DEFAULTS.revenueStatuses],
};

/**
 * The settings as a build's options: what a caller that read the configuration (src/config, once per command)
 * spreads into its BuildOptions, so that the build follows PERKS_BUILD_MEMORY_LIMIT, PERKS_MART_LAYOUT and
 * PERKS_REVENUE_STATUSES.
 */
export function buildSettingsOf(
  settings: BuildSettings,
): Pick<BuildOptions, 'memoryLimit' | 'martLayout' | 'revenueStatuses'> {
  return {
    memoryLimit: settings.buildMemoryLimit,
    martLayout: settings.martLayout,
    revenueStatuses: [...settings.revenueStatuses],
  };
}

/**
 * The options checked, each unset one taken from `settings` (src/config, already checked there), else the
 * built-in defaults: the build never reads the environment, its caller passes what it read.
 */
export function checkBuildOptions(given: BuildOptions, settings: BuildSettings = BUILT_IN): CheckedBuildOptions {
  const input = given;
  const parsed = BuildOptions.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.join('.');
    const value = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], input);
    throw new ConfigError(
      `${FLAG_NAMES[path] ?? `build option ${path || '(options)'}`}=${JSON.stringify(value)} is invalid: ${issue.message}`,
    );
  }
  const asOf = parsed.data.asOf ?? todayUtc();
  return {
    ...parsed.data,
    asOf,
    segments: parsed.data.segments ?? SegmentThresholds.parse({}),
    revenueStatuses: parsed.data.revenueStatuses ?? [...settings.revenueStatuses],
    memoryLimit: parsed.data.memoryLimit ?? settings.buildMemoryLimit,
    martLayout: parsed.data.martLayout ?? settings.martLayout,
  };
}

/**
 * The as-of instant the credit models apply items' expiry at: now on the clock's own day, else the last
 * microsecond of the as-of day (a replay of a past day reads the balances as that day closed).
 */
export function asOfInstant(asOf: string, at: Date = now()): Date {
  return asOf === todayUtc() ? at : new Date(`${asOf}T23:59:59.999Z`);
}

/** Sets the variables models may read (`getvariable('as_of')`, `as_of_at`, the segment thresholds, the revenue rule). */
export async function setModelVariables(
  conn: DuckDBConnection,
  options: { asOf: string; segments: SegmentThresholds; revenueStatuses: readonly string[] },
  /** The instant rows are stamped with and expiry is applied at; one for both builds of --verify-incremental. */
  evaluatedAt: string = now().toISOString(),
): Promise<void> {
  const vars: Record<string, string> = {
    as_of: `DATE ${str(options.asOf)}`,
    as_of_at: `TIMESTAMPTZ ${str(asOfInstant(options.asOf, new Date(evaluatedAt)).toISOString())}`,
    segment_new_days: String(options.segments.newDays),
    segment_active_days: String(options.segments.activeDays),
    segment_dormant_days: String(options.segments.dormantDays),
    // the recognised-revenue rule of open months (a closed month keeps its close's: close_records)
    revenue_statuses: `[${options.revenueStatuses.map(str).join(', ')}]::varchar[]`,
    // "now" for models that stamp rows (the write-back's segment changes): the program's clock, not DuckDB's.
    evaluated_at: `TIMESTAMPTZ ${str(evaluatedAt)}`,
  };
  for (const [name, value] of Object.entries(vars)) await conn.run(`SET VARIABLE ${id(name)} = ${value}`);
}
