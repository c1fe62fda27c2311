/** startSandbox options, checked once at the entry point; defaults and scale presets live here. */
import { z } from 'zod';
import { DEFAULTS } from '../config/index.js';
import { TOKEN_RATE_LIMIT_PER_MINUTE } from './choices.js';

/** A YYYY-MM-DD that names a real day (Date.parse alone rolls 2026-02-30 over to March). */
export function isCalendarDate(d: string): boolean {
  const ms = Date.parse(`${d}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === d;
}

export const SCALES = ['tiny', 'small', 'medium', 'large'] as const;
export type Scale = (typeof SCALES)[number];

export interface ScalePreset {
  /** Users generated per group, before the group's weight. */
  usersPerGroup: number;
  /** Orders over the year before today, all groups together. */
  orders: number;
  offers: number;
}

export const SCALE_PRESETS: Record<Scale, ScalePreset> = {
  tiny: { usersPerGroup: 30, orders: 1_500, offers: 24 },
  small: { usersPerGroup: 700, orders: 20_000, offers: 60 },
  medium: { usersPerGroup: 6_700, orders: 200_000, offers: 120 },
  large: { usersPerGroup: 34_000, orders: 1_200_000, offers: 240 },
};

/** The schema changes the `schemaDrift` fault can switch on (each described in http/schema-drift.ts). */
export const SCHEMA_DRIFT_KINDS = ['newField', 'typeChange', 'removedField', 'nestedField', 'personalField'] as const;
export type SchemaDriftKind = (typeof SCHEMA_DRIFT_KINDS)[number];

/** Fault injection for reliability tests; every field 0 (off) by default. */
export interface Faults {
  /** Fraction of API calls answered 500, 502 or 503. */
  errorRate: number;
  /** Added to every API call, in ms. */
  latencyMs: number;
  /** Fraction of API calls never answered (the client must time out). */
  hangRate: number;
  /** Fraction of successful API calls whose JSON body is cut mid-way. */
  truncateRate: number;
  /** Revoke a token once it has served this many calls (0: never). */
  revokeTokenEvery: number;
  /** Retry-After (seconds) on 429s instead of the computed wait (0: computed). */
  retryAfter: number;
  /** Fraction of listed records that drift: a wrong type, an unknown field, numbers as strings, nulls left out (http/drift.ts). */
  driftRate: number;
  /** Schema changes switched on: fields appearing, changing type, disappearing, nested (http/schema-drift.ts). */
  schemaDrift: SchemaDriftKind[];
}

export const NO_FAULTS: Faults = {
  errorRate: 0,
  latencyMs: 0,
  hangRate: 0,
  truncateRate: 0,
  revokeTokenEvery: 0,
  retryAfter: 0,
  driftRate: 0,
  schemaDrift: [],
};

const rate = z.number().min(0).max(1);
export const FaultsSchema = z
  .object({
    errorRate: rate,
    latencyMs: z.number().min(0),
    hangRate: rate,
    truncateRate: rate,
    revokeTokenEvery: z.int().min(0),
    retryAfter: z.int().min(0),
    driftRate: rate,
    schemaDrift: z.array(z.enum(SCHEMA_DRIFT_KINDS)),
  })
  .partial()
  .strict();

export const SandboxOptionsSchema = z
  .object({
    host: z.string().min(1).default(DEFAULTS.sandbox.host),
    port: z.int().min(0).max(65535).default(DEFAULTS.sandbox.port),
    seed: z.int().default(DEFAULTS.sandbox.seed),
    scale: z.enum(SCALES).default(DEFAULTS.sandbox.scale),
    /** API calls per minute per client_id. */
    rateLimit: z.int().min(1).default(DEFAULTS.sandbox.rateLimit),
    /** Token requests per minute per client_id. */
    tokenRateLimit: z.int().min(1).default(TOKEN_RATE_LIMIT_PER_MINUTE),
    today: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
      .refine((d) => isCalendarDate(d), 'expected a real calendar date')
      .optional(),
    faults: FaultsSchema.default({}),
    /** Omit the pagination fields on /v3/user/list and /v3/orders (the spec leaves them unclear). */
    bareListings: z.boolean().default(false),
    /** Path of the user credit operation (not shown in the spec). */
    creditPath: z
      .string()
      .refine(
        (p) => p.startsWith('/') && p.includes('{identifier}') && p.includes('{identifier_value}'),
        'expected a path with {identifier} and {identifier_value}',
      )
      .default(DEFAULTS.creditPath),
    /**
     * Share of the last 3 days' orders held back at generation and released by each churn (late
     * arrivals, world/churn.ts). 0: every order is listed from the start.
     */
    lateOrders: z.number().min(0).max(1).default(0),
    /**
     * The interaction types the platform accepts (the spec: not shown). Unset, any type is stored; set,
     * another type is refused with 422 "The selected interaction type is invalid.", as a platform whose
     * types are configured by its operator would.
     */
    interactionTypes: z.array(z.string().min(1)).min(1).optional(),
    /** Token lifetime in seconds (the spec: one year); shorter lets tests see expiry. */
    tokenLifetimeSeconds: z.int().min(1).default(31_536_000),
  })
  .strict();

export type SandboxOptions = z.input<typeof SandboxOptionsSchema>;
export type ResolvedOptions = z.output<typeof SandboxOptionsSchema>;
