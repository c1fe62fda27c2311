/**
 * What changed between the group's last users snapshot and the one being landed, recorded durably
 * BEFORE the new snapshot replaces the old (a rerun the same day replaces the day's partition, and
 * the old rows are gone with it): users who joined, changed status, were deactivated or restored,
 * were anonymised, changed e-mail, or left the listing.
 *
 * Two records come of it: the change journal (`<out>/state/user_changes/<group>.json`, kept 35 days),
 * which the per-user planner reads (a change after a user's last refresh puts them first), and for
 * anonymised users an owed erasure (src/lake/erasure-queue.ts) holding the personal keys of what the
 * lake held for them, so the forget step finds their orders even after the old snapshot is gone.
 */
import { z } from 'zod';
import {
  oweErasures,
  personalKeySql,
  scanFilesSql,
  snapshotsOf,
  withLakeConnection,
  type OwedErasure,
} from '../../lake/index.js';
import type { RunContext } from '../run-context.js';

export const CHANGE_KINDS = ['joined', 'status', 'deactivated', 'restored', 'anonymised', 'email', 'left'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const UserChange = z.object({ id: z.number().int(), kinds: z.array(z.enum(CHANGE_KINDS)), at: z.string() });
export type UserChange = z.infer<typeof UserChange>;
const Journal = z.object({ changes: z.array(UserChange) });

const JOURNAL = 'user_changes';
/** How long a change is kept: beyond it, the planner's overdue rule refreshes everyone anyway. */
const KEEP_DAYS = 35;

interface Seen {
  status: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  alt_uid: string | null;
  deleted_at: string | null;
  /** Personal keys of the values above (computed by DuckDB, as the scrub matches them); landed rows only. */
  keys?: string[];
}

const text = (v: unknown): string | null => {
  const value = v as string | number | boolean | null | undefined; // a landed record's field
  return value === null || value === undefined || value === '' ? null : String(value);
};

function seenOf(r: Record<string, unknown>): Seen {
  return {
    status: text(r.status),
    email: text(r.email),
    first_name: text(r.first_name),
    last_name: text(r.last_name),
    alt_uid: text(r.alt_uid),
    deleted_at: text(r.deleted_at),
  };
}

/**
 * The group's latest readable snapshot (today's, when a run already landed one today). A snapshot whose
 * file cannot be read (damaged) is passed over for the one before: this run's listing replaces it.
 */
async function lastSnapshot(outDir: string, group: number): Promise<Map<number, Seen>> {
  const seen = new Map<number, Seen>();
  const snapshots = snapshotsOf(outDir, 'users', group).reverse();
  if (!snapshots.some((s) => s.files.length)) return seen;
  await withLakeConnection(async (c) => {
    for (const { files } of snapshots) {
      if (!files.length) continue;
      try {
        const r = await c.runAndReadAll(
          `SELECT id::BIGINT AS id, status, email, first_name, last_name, alt_uid, deleted_at::VARCHAR AS deleted_at,
                  list_filter([${['email', 'first_name', 'last_name', 'alt_uid'].map((c) => personalKeySql(c)).join(', ')}], k -> k IS NOT NULL) AS keys
           FROM ${scanFilesSql(files, { hive: false })}
           QUALIFY row_number() OVER (PARTITION BY id ORDER BY _extracted_at DESC) = 1`,
        );
        for (const row of r.getRowObjectsJS())
          seen.set(Number(row.id), { ...seenOf(row), keys: (row.keys as string[] | null) ?? [] });
        return;
      } catch (err) {
        // Damaged: the snapshot before it is the last one that can be compared with. Anything else stops the run.
        if (!DAMAGED.test((err as Error).message)) throw err;
        seen.clear();
      }
    }
  });
  return seen;
}

/** DuckDB's words for a file that is not (or no longer) a whole Parquet file. */
const DAMAGED = /No magic bytes|not a parquet file|Invalid Input Error|Corrupt|truncated/i;

function kindsOf(before: Seen | undefined, after: Seen | undefined): ChangeKind[] {
  if (!before) return ['joined'];
  if (!after) return ['left'];
  const kinds: ChangeKind[] = [];
  if (before.status !== after.status) kinds.push('status');
  if (!before.deleted_at && after.deleted_at) kinds.push('deactivated');
  if (before.deleted_at && !after.deleted_at) kinds.push('restored');
  const held = [before.email, before.first_name, before.last_name].some((v) => v !== null);
  if (held && after.email === null && after.first_name === null && after.last_name === null) kinds.push('anonymised');
  else if (before.email !== null && after.email !== null && before.email.toLowerCase() !== after.email.toLowerCase())
    kinds.push('email');
  return kinds;
}

/** Follows one group's users listing as it lands; `record()` writes what changed, before the commit. */
export async function trackUserChanges(ctx: RunContext, group: number) {
  const before = await lastSnapshot(ctx.output.dir, group);
  const after = new Map<number, Seen>();
  return {
    see: (record: Record<string, unknown>): void => {
      if (typeof record.id === 'number') after.set(record.id, seenOf(record));
    },
    async record(): Promise<UserChange[]> {
      if (!before.size) return []; // a first snapshot: nothing to compare with
      const at = ctx.now.toISOString();
      const changes: UserChange[] = [];
      const owed: OwedErasure[] = [];
      for (const id of new Set([...before.keys(), ...after.keys()])) {
        const kinds = kindsOf(before.get(id), after.get(id));
        if (!kinds.length) continue;
        changes.push({ id, kinds, at });
        if (kinds.includes('anonymised')) {
          owed.push({ id, group, keys: [...new Set(before.get(id)!.keys ?? [])], observed_at: at });
        }
      }
      // The erasure first: if the run dies after it, the next forget still finds the user.
      await oweErasures(ctx.output.dir, group, owed);
      if (changes.length) await appendJournal(ctx, group, changes);
      return changes;
    },
  };
}

async function appendJournal(ctx: RunContext, group: number, changes: UserChange[]): Promise<void> {
  const keepFrom = new Date(ctx.now.getTime() - KEEP_DAYS * 86_400_000).toISOString();
  const current = (await ctx.state.read(JOURNAL, String(group), Journal))?.changes ?? [];
  await ctx.state.write(JOURNAL, String(group), { changes: [...current.filter((c) => c.at >= keepFrom), ...changes] });
}

/** The group's recorded changes (the planner's signals). */
export async function userChangesOf(ctx: RunContext, group: number): Promise<UserChange[]> {
  return (await ctx.state.read(JOURNAL, String(group), Journal))?.changes ?? [];
}
