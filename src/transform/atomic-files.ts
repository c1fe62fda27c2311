/**
 * Files replaced atomically: written under a temporary name beside the target, then renamed over it, so
 * a reader sees the old file or the new one, never half of one. Temporary names carry the writer's pid,
 * so leftovers of a killed build can be told apart from a build still running.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pidAlive } from '../lake/index.js';

const MARK = '.tmp-';

/** `<target>.tmp-<pid>-<random>` in the target's folder (a rename across folders is not atomic). */
export function tempPathFor(target: string): string {
  return `${target}${MARK}${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Moves a finished temporary file over its target. */
export function commit(temp: string, target: string): void {
  renameSync(temp, target);
}

/** Removes a temporary file and what DuckDB may have put beside it (WAL, spill folder). */
export function discard(temp: string): void {
  for (const path of [temp, `${temp}.wal`, `${temp}.tmp`, `${temp}.spill`])
    rmSync(path, { recursive: true, force: true });
}

/** Removes temporary leftovers of `target` whose writing process is gone. */
export function removeStaleTemps(target: string): void {
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return;
  }
  const prefix = `${basename(target)}${MARK}`;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number.parseInt(name.slice(prefix.length), 10);
    if (pid === process.pid || (!Number.isNaN(pid) && pidAlive(pid))) continue;
    rmSync(join(dirname(target), name), { recursive: true, force: true });
  }
}
