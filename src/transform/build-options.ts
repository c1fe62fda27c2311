/**
 * Options of a build, checked once at the entry point, with their defaults, and the DuckDB variables the
 * models read them through (`getvariable('as_of')`, …), so the SQL stays plain DuckDB.
 */
import { z } from 'zod';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import { DEFAULTS } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { isRealDay } from '../shared/checks.js';
import { now, todayUtc } from '../shared/clock.js';

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

export const BuildOptions = z.object({
  outDir: z.string().min(1),
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
   * PERKS_BUILD_MEMORY_LIMIT, else DEFAULTS.build.memoryLimit.
   */
  memoryLimit: z
    .string()
    .regex(/^\d+(\.\d+)?\s*[KMGT]i?B$/i, 'expected a size such as 1GB')
    .optional(),
});
export type BuildOptions = z.input<typeof BuildOptions>;
export type CheckedBuildOptions = z.infer<typeof BuildOptions> & {
  asOf: string;
  segments: SegmentThresholds;
  memoryLimit: string;
};

/** The CLI flag behind an option, for messages. */
const FLAG_NAMES: Record<string, string> = {
  asOf: '--as-of',
  memoryLimit: '--memory-limit (or PERKS_BUILD_MEMORY_LIMIT)',
  'segments.newDays': '--new-days',
  'segments.activeDays': '--active-days',
  'segments.dormantDays': '--dormant-days',
};

export function checkBuildOptions(given: BuildOptions, env: NodeJS.ProcessEnv = process.env): CheckedBuildOptions {
  const fromEnv = env.PERKS_BUILD_MEMORY_LIMIT?.trim();
  const input = given.memoryLimit === undefined && fromEnv ? { ...given, memoryLimit: fromEnv } : given;
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
    memoryLimit: parsed.data.memoryLimit ?? DEFAULTS.build.memoryLimit,
  };
}

/** Sets the variables models may read (`getvariable('as_of')`, the segment thresholds). */
export async function setModelVariables(
  conn: DuckDBConnection,
  options: { asOf: string; segments: SegmentThresholds },
  /** The instant rows are stamped with; one for both builds of --verify-incremental. */
  evaluatedAt: string = now().toISOString(),
): Promise<void> {
  const vars: Record<string, string> = {
    as_of: `DATE ${str(options.asOf)}`,
    segment_new_days: String(options.segments.newDays),
    segment_active_days: String(options.segments.activeDays),
    segment_dormant_days: String(options.segments.dormantDays),
    // "now" for models that stamp rows (the write-back's segment changes): the program's clock, not DuckDB's.
    evaluated_at: `TIMESTAMPTZ ${str(evaluatedAt)}`,
  };
  for (const [name, value] of Object.entries(vars)) await conn.run(`SET VARIABLE ${id(name)} = ${value}`);
}
