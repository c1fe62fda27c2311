/**
 * The output directory's stamps: the instants runs write into the output and later compare. An extract's
 * stamp is its rows' `_extracted_at` and its run id's time; readers take a key's row with the latest
 * `_extracted_at` (then `_run_id`) as current (sql/staging, the per-user streams' refresh batches above all).
 * A write-back's stamps are its ledger entries' `attempted_at`: the ledger's latest entry of a row is its
 * state, and `perks writeback --verify` lets the lake decide for a sent row only when the user's
 * interactions were extracted after it (`_extracted_at` > `attempted_at`). A close's `closed_at` splits the
 * lake's observations into the frozen figures and the adjustments (close/close.ts). So every stamp must come
 * after every stamp taken in the output directory before it, by any of its writers.
 * The clock does not promise that: under PERKS_NOW every process restarts at the same instant (a day
 * replayed), and a machine's clock can go back. A rerun then stamped its rows at or before the run it
 * follows: the older rows stayed current, or a key landed twice with one `_extracted_at` and a random run id
 * suffix chose (test/extract/run-order.test.ts); and an extract after a write-back stamped before the posts
 * it read, so --verify never let the lake decide (test/writeback/verify-after-extract.test.ts). So a stamp is
 * the program's clock (src/shared/clock.ts), or 1 ms after the latest stamp recorded in the directory when
 * the clock is not past it. The run's calendar (windows, snapshot day) stays the clock's. Each writer keeps
 * its own file: each extract worker scope (extract/per-user/work-lock.ts), written under its lock before
 * anything lands, the write-back (`writeback.json`), written as its run ends, and the close (`close.json`),
 * written before its records; a run reads them all (workers running side by side write disjoint keys).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from './atomic-file.js';
import { CorruptStateError } from './errors.js';
import { stateRoot } from './paths.js';

const stampsDir = (outDir: string) => join(stateRoot(outDir), 'run-stamps');

/** The write-back's and the close's files among the writers' (an extract scope's are `groups-…`). */
export const WRITEBACK_STAMPS = 'writeback';
export const CLOSE_STAMPS = 'close';

/** The latest stamp any writer recorded in the directory (ms), or -Infinity when none has. */
export async function latestStamp(outDir: string): Promise<number> {
  const dir = stampsDir(outDir);
  let latest = Number.NEGATIVE_INFINITY;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const file = join(dir, name);
    let at = Number.NaN;
    try {
      at = Date.parse(String((JSON.parse(await readFile(file, 'utf8')) as { at?: unknown }).at));
    } catch {
      // not JSON, or not an object: corrupt (below)
    }
    if (Number.isNaN(at)) throw new CorruptStateError(file, 'expected {"at": "<ISO instant>"}');
    latest = Math.max(latest, at);
  }
  return latest;
}

/**
 * The stamp of a run starting at `clockAt` (read only: nothing is written until the run lands something, so
 * a run refused before, e.g. for a wrong secret, leaves the output as it was).
 */
export async function nextRunStamp(outDir: string, clockAt: Date): Promise<Date> {
  return new Date(Math.max(clockAt.getTime(), (await latestStamp(outDir)) + 1));
}

/**
 * Records a writer's latest stamp (an extract scope's scopeKey before its first row lands, so a rerun stamps
 * after it; WRITEBACK_STAMPS for the write-back's latest ledger entry; CLOSE_STAMPS for a close's instant).
 */
export async function recordRunStamp(outDir: string, writer: string, stamp: Date): Promise<void> {
  await writeJsonAtomic(
    join(stampsDir(outDir), `${writer}.json`),
    { at: stamp.toISOString() },
    { mode: 0o600, dirMode: 0o700 },
  );
}
