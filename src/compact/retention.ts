/**
 * Snapshot retention: a snapshot stream (users, groups, offers) keeps, per group, its last KEEP_DAYS daily
 * snapshots and the last snapshot of every earlier month; the others go. The latest snapshot (what is
 * current) always stays. Users snapshots also keep any snapshot holding a user's personal values (email,
 * names, alternative id) that no kept snapshot holds: `perks forget` finds a user's older email addresses
 * there (to clear orders, which name no user), and an anonymised user's old values stay until forgotten.
 * Files go under a journal switch (journal.ts), so a reader that follows the journal never sees a half.
 */
import { LIST, listValue, VARCHAR } from '../shared/duckdb.js';
import { scanSql, snapshotSets, streamFiles, switchFiles, withLakeConnection, type Snapshot } from '../lake/index.js';

/** Daily snapshots kept before one per month (documented in docs/assumptions.md, ## Lake). */
export const KEEP_DAYS = 14;

export const SNAPSHOT_STREAMS: readonly { stream: string; personal?: string[] }[] = [
  { stream: 'users', personal: ['email', 'first_name', 'last_name', 'alt_uid'] },
  { stream: 'groups' },
  { stream: 'offers' },
];

export interface StreamRetention {
  stream: string;
  /** Snapshots removed, and kept only because they hold personal values no kept snapshot holds. */
  dropped: number;
  heldForPersonalData: number;
  filesBefore: number;
  filesAfter: number;
}

export async function applyRetention(
  outDir: string,
  failures: string[],
  keepDays = KEEP_DAYS,
): Promise<StreamRetention[]> {
  const out: StreamRetention[] = [];
  for (const spec of SNAPSHOT_STREAMS) {
    const tally: StreamRetention = {
      stream: spec.stream,
      dropped: 0,
      heldForPersonalData: 0,
      filesBefore: streamFiles(outDir, spec.stream).length,
      filesAfter: 0,
    };
    for (const snapshots of snapshotSets(outDir, spec.stream)) {
      let drop = toDrop(snapshots, keepDays);
      if (!drop.length) continue;
      if (spec.personal) {
        const held = await holdingOwnValues(snapshots, drop, spec.personal).catch((err: unknown) => {
          const line = (err instanceof Error ? err.message : String(err)).split('\n')[0];
          failures.push(`${spec.stream} snapshots of ${snapshots[0].dir.split('/').at(-2)}: ${line}`);
          return new Set(drop.map((d) => d.day)); // unreadable: keep them all
        });
        tally.heldForPersonalData += held.size;
        drop = drop.filter((s) => !held.has(s.day));
      }
      if (!drop.length) continue;
      const latest = snapshots[snapshots.length - 1];
      // No new file: the latest snapshot stands as the switch's target (its presence is what lets a switch
      // a kill interrupted finish, journal.ts).
      await switchFiles(outDir, {
        stream: spec.stream,
        target: latest.files[0],
        inputs: drop.flatMap((d) => d.files),
        dirs: drop.map((d) => d.dir),
      });
      tally.dropped += drop.length;
    }
    tally.filesAfter = streamFiles(outDir, spec.stream).length;
    out.push(tally);
  }
  return out;
}

/** Beyond the last `keepDays` snapshots (by day, from the latest), all but the last of each month. */
export function toDrop(snapshots: Snapshot[], keepDays: number): Snapshot[] {
  if (!snapshots.length) return [];
  const latest = snapshots[snapshots.length - 1].day;
  const cutoff = new Date(Date.parse(`${latest}T00:00:00Z`) - (keepDays - 1) * 86_400_000).toISOString().slice(0, 10);
  const lastOfMonth = new Map<string, string>();
  for (const s of snapshots) lastOfMonth.set(s.day.slice(0, 7), s.day);
  return snapshots.filter((s) => s.day < cutoff && lastOfMonth.get(s.day.slice(0, 7)) !== s.day);
}

/** The snapshots among `drop` holding a user's personal values (per id) that no kept snapshot holds. */
async function holdingOwnValues(all: Snapshot[], drop: Snapshot[], personal: string[]): Promise<Set<string>> {
  const dropped = new Set(drop.map((d) => d.day));
  const kept = all.filter((s) => !dropped.has(s.day));
  const values = (files: string) =>
    `SELECT DISTINCT _snapshot_date::VARCHAR AS d, id::BIGINT AS id, ${personal.map((c) => `"${c}"::VARCHAR AS "${c}"`).join(', ')}
     FROM ${scanSql(files, { autocast: false })}`;
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `WITH gone AS (${values('$drop')}), stay AS (${values('$keep')})
       SELECT DISTINCT d FROM gone g WHERE NOT EXISTS (
         SELECT 1 FROM stay s WHERE s.id = g.id AND ${personal.map((p) => `s."${p}" IS NOT DISTINCT FROM g."${p}"`).join(' AND ')})`,
      { drop: listValue(drop.flatMap((d) => d.files)), keep: listValue(kept.flatMap((k) => k.files)) },
      { drop: LIST(VARCHAR), keep: LIST(VARCHAR) },
    );
    return new Set((r.getRowObjectsJson() as { d: string }[]).map((x) => x.d));
  });
}
