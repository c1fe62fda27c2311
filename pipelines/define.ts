/**
 * A stream definition is data, checked by a schema when it is loaded (guide example 3):
 * the operation, its parameters, its key, how it is windowed or snapshotted, what it depends on and
 * its record schema. The extract runner (src/extract) runs the list it is given; a definition holds no logic
 * and no secrets.
 */
import { z } from 'zod';
import { operations, type OperationName } from '../src/resources/operations.js';

/** A stream's name: its lake folder and its `--streams` name. */
const StreamName = z.string().regex(/^[a-z][a-z_]*$/, 'expected a lower_snake_case name');

const OperationNameSchema = z.enum(Object.keys(operations) as [OperationName, ...OperationName[]]);
const ZodObjectSchema = z.custom<z.ZodObject>((v) => v instanceof z.ZodObject, 'expected a zod object schema');

const common = {
  name: StreamName,
  description: z.string().min(1),
  operation: OperationNameSchema,
  /** Record schema: the shared resource declaration. */
  record: ZodObjectSchema,
  /** Columns that identify a record within its group. */
  key: z.array(z.string()).min(1),
  dependsOn: z.array(StreamName).default([]),
  /** Columns the pipeline adds to each record (name → DuckDB type), beside the record's own. */
  columns: z.record(z.string(), z.string()).default({}),
  /** Fixed request body fields. */
  body: z.record(z.string(), z.unknown()).default({}),
};

const Snapshot = z.object({
  ...common,
  kind: z.literal('snapshot'),
  /** organisation: one listing for the credential; group: one listing per group. */
  scope: z.enum(['organisation', 'group']),
});

const Windowed = z.object({
  ...common,
  kind: z.literal('windowed'),
  scope: z.literal('group'),
  window: z.object({
    unit: z.enum(['day', 'month']),
    fromParam: z.string(),
    toParam: z.string(),
    /** datetime: "YYYY-MM-DD HH:MM:SS" with an inclusive end second; date: "YYYY-MM-DD" with an inclusive last day. */
    format: z.enum(['datetime', 'date']),
    /** The Hive partition column holding the window's first local day. */
    partition: z.string(),
  }),
  /**
   * Which records mark their user active for the per-user streams: records new to the window, or
   * whose `compare` fields changed since it was last landed. `userField` names the user (email or id).
   */
  activity: z
    .object({
      userField: z.enum(['email', 'id']),
      compare: z.array(z.string()).min(1),
      /**
       * Such a record bears on the user's credit (the planner ranks it first, src/extract/per-user/user-selection.ts):
       * when its `amount` field is above zero, or its `status` field is one of `statuses`.
       */
      bearing: z.object({ amount: z.string(), status: z.string(), statuses: z.array(z.string()) }).optional(),
    })
    .optional(),
  /**
   * History: each record new to its window or changed since it was last landed (the `activity` comparison)
   * is also appended, as `record`'s fields, to the lake stream `stream` (same partition, one file per
   * window and run): the versions a window replace would otherwise lose. Needs `activity`.
   */
  history: z.object({ stream: z.string().regex(/^[a-z_]+$/), record: ZodObjectSchema }).optional(),
  /**
   * What a re-read of a settled month is weighed by (src/extract/windows/settled-guard.ts): the record's status,
   * currency and money field, each one of `activity.compare`. A re-read that would remove or change too much of
   * such a month is held, not applied.
   */
  guard: z.object({ status: z.string(), currency: z.string(), amount: z.string() }).optional(),
  /** Users batched into the body (redemption stats): identifier kind, values field, batch size. */
  userBatch: z
    .object({ identifier: z.enum(['id', 'email']), valuesParam: z.string(), size: z.int().min(1).max(100) })
    .optional(),
});

const PerUser = z.object({
  ...common,
  kind: z.literal('per-user'),
  scope: z.literal('group'),
  /** How a user is named in the path. */
  identifier: z.enum(['id', 'email', 'UID']).default('id'),
  /** Per-user time window params (interactions); absent for point-in-time resources (credit). */
  window: z.object({ fromParam: z.string(), toParam: z.string() }).optional(),
  /** credit: one row per user from the balances and the paged items; records: one row per item. */
  shape: z.enum(['credit', 'records']),
  /**
   * Refresh users the windowed streams marked active (new or changed orders, redemptions). True for
   * credit (orders spend credit); false for interactions, which integrators post, not orders.
   */
  refreshActiveUsers: z.boolean().default(true),
});

export const StreamDefinition = z.discriminatedUnion('kind', [Snapshot, Windowed, PerUser]).superRefine((d, ctx) => {
  if (d.kind !== 'windowed') return;
  // The guard weighs the values the re-read compares: a field it did not compare would read as unchanged.
  const weighed = d.guard ? Object.values(d.guard).filter((f) => !d.activity?.compare.includes(f)) : [];
  if (weighed.length)
    ctx.addIssue({
      code: 'custom',
      path: ['guard'],
      message: `every field of the guard must be in activity.compare (missing: ${weighed.join(', ')})`,
    });
  if (!d.history) return;
  // A history field that is not compared could change without a new version: a closed month's figure would
  // move with no adjustment to explain it.
  const compared = new Set([...d.key, ...(d.activity?.compare ?? [])]);
  const missing = Object.keys(d.history.record.shape).filter((f) => !compared.has(f));
  if (!d.activity || missing.length)
    ctx.addIssue({
      code: 'custom',
      path: ['history'],
      message: `every field of the history record must be in activity.compare (missing: ${missing.join(', ') || 'activity'})`,
    });
});
export type StreamDefinition = z.infer<typeof StreamDefinition>;
export type SnapshotStream = z.infer<typeof Snapshot>;
export type WindowedStream = z.infer<typeof Windowed>;
export type PerUserStream = z.infer<typeof PerUser>;

/** Checks a definition at load time; a bad one is a clear error naming the stream and the field. */
export function defineStream<const Name extends string>(
  definition: z.input<typeof StreamDefinition> & { name: Name },
): StreamDefinition & { name: Name } {
  const parsed = StreamDefinition.safeParse(definition);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`stream definition ${definition.name}: ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data as StreamDefinition & { name: Name };
}

/** The streams of a run, in dependency order: each name once, and every stream a definition depends on before it. */
export function streamList<const S extends StreamDefinition>(streams: readonly S[]): readonly S[] {
  const seen = new Set<string>();
  for (const s of streams) {
    if (seen.has(s.name)) throw new Error(`stream definition ${s.name}: defined twice`);
    const missing = s.dependsOn.filter((d) => !seen.has(d));
    if (missing.length)
      throw new Error(`stream definition ${s.name}: dependsOn ${missing.join(', ')}, which no stream before it is`);
    seen.add(s.name);
  }
  return streams;
}
