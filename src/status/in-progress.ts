/**
 * A run in progress: whoever holds the output directory's lock (`<out>/.perks.lock`, taken by extract, run,
 * build, close, compact and forget), since when, its last heartbeat, and whether it looks stale (the lock's
 * own rule: a heartbeat older than STALE_LOCK_MS, or a holder on this machine whose process is gone; the next
 * run takes such a lock over). The lock records no progress of its own: the heartbeat is its last sign of life.
 */
import { heartbeatAgeMs, readLockHolder, staleReason } from '../lake/index.js';

export interface InProgress {
  /** The perks command holding the lock (absent in locks written by older versions). */
  command: string | null;
  pid: number;
  host: string;
  startedAt: string;
  heartbeatAt: string;
  /** Minutes since the holder last refreshed the lock (it does every 30 s while it runs). */
  heartbeatAgeMinutes: number;
  /** null: it looks alive; else why it looks stale. */
  stale: string | null;
}

/** The lock's holder, its heartbeat's age in wall time as the lock measures it (not PERKS_NOW's clock). */
export async function inProgress(outDir: string): Promise<InProgress | null> {
  const holder = await readLockHolder(outDir);
  if (!holder) return null;
  const ageMs = Math.max(0, heartbeatAgeMs(holder) || 0);
  const stale = staleReason(holder);
  return {
    command: holder.command ?? null,
    pid: holder.pid,
    host: holder.host,
    startedAt: holder.started_at,
    heartbeatAt: holder.heartbeat_at,
    heartbeatAgeMinutes: Math.round(ageMs / 6_000) / 10,
    stale,
  };
}

/** "in progress: perks extract (pid 123 on host-a) since …, last heartbeat 0.2 min ago" or null. */
export function inProgressText(p: InProgress | null): string | null {
  if (!p) return null;
  const who = `${p.command ? `perks ${p.command}` : 'a perks command'} (pid ${p.pid} on ${p.host})`;
  const beat = `last heartbeat ${p.heartbeatAt} (${p.heartbeatAgeMinutes} min ago)`;
  const stale = p.stale ? `; looks STALE: ${p.stale} (the next run takes its lock over)` : '';
  return `in progress: ${who} since ${p.startedAt}, ${beat}${stale}`;
}
