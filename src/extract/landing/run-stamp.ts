/**
 * A run's stamp: the instant its rows carry as `_extracted_at`, and its run id's time. Readers take a key's
 * row with the latest `_extracted_at` (then `_run_id`) as current (sql/staging, the per-user streams'
 * refresh batches above all), so a run's stamp must come after every earlier run's of the output directory.
 * The clock does not promise that: under PERKS_NOW every process restarts at the same instant (a day
 * replayed), and a machine's clock can go back. A rerun then stamped its rows at or before the run it
 * follows: the older rows stayed current, or a key landed twice with one `_extracted_at` and a random run id
 * suffix chose (test/extract/run-order.test.ts). So the stamp is the clock, or 1 ms after the latest stamp
 * taken in this directory when the clock is not past it. The run's calendar (windows, snapshot day) stays the
 * clock's. Each worker scope (work-lock.ts) keeps its own file, written under its lock before anything lands;
 * a run reads them all (workers running side by side write disjoint keys).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptStateError, stateRoot, writeJsonAtomic } from '../../lake/index.js';

const stampsDir = (outDir: string) => join(stateRoot(outDir), 'run-stamps');

/**
 * The stamp of a run starting at `clockAt` (read only: nothing is written until the run lands something, so
 * a run refused before, e.g. for a wrong secret, leaves the output as it was).
 */
export async function nextRunStamp(outDir: string, clockAt: Date): Promise<Date> {
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
  return new Date(Math.max(clockAt.getTime(), latest + 1));
}

/** Records a run's stamp for its scope (scopeKey): before its first row lands, so a rerun stamps after it. */
export async function recordRunStamp(outDir: string, scope: string, stamp: Date): Promise<void> {
  await writeJsonAtomic(
    join(stampsDir(outDir), `${scope}.json`),
    { at: stamp.toISOString() },
    { mode: 0o600, dirMode: 0o700 },
  );
}
