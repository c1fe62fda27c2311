/**
 * Files replaced atomically: written under a temporary name beside the target, then renamed over it, so
 * a reader sees the old file or the new one, never half of one. Temporary names carry the writer's pid,
 * so leftovers of a killed build can be told apart from a build still running.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pidAlive } from '../../lake/index.js';
import { fsyncPathSync, renameDurablySync } from '../../shared/durable-file.js';

const MARK = '.tmp-';

/** `<target>.tmp-<pid>-<random>` in the target's folder (a rename across folders is not atomic). */
export function tempPathFor(target: string): string {
  return `${target}${MARK}${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Moves a finished temporary file over its target, durably (src/shared/durable-file.ts). */
export function commit(temp: string, target: string): void {
  fsyncPathSync(temp);
  renameDurablySync(temp, target);
}

/** Removes a temporary file and what DuckDB may have put beside it (WAL, spill folder). */
export function discard(temp: string): void {
  for (const path of [temp, `${temp}.wal`, `${temp}.tmp`, `${temp}.spill`])
    rmSync(path, { recursive: true, force: true });
}

/** Removes temporary leftovers of `target` whose writing process is gone. */
export function removeStaleTemps(target: string): void {
  removeStaleTempsIn(dirname(target), basename(target));
}

/** Removes the temporary leftovers in `dir` (of the files named `name` only, when given) whose writer is gone. */
export function removeStaleTempsIn(dir: string, name = ''): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const found of names) {
    // `<file>.tmp-<pid>-<random>`: of the file `name` when given, else of any file
    const at = found.indexOf(MARK);
    if (at <= 0 || (name && found.slice(0, at) !== name)) continue;
    const pid = Number.parseInt(found.slice(at + MARK.length), 10);
    if (pid === process.pid || (!Number.isNaN(pid) && pidAlive(pid))) continue;
    rmSync(join(dir, found), { recursive: true, force: true });
  }
}

/**
 * What a build does to a file when it swaps: a finished temporary file moved over it, the file removed, or a
 * scratch folder of the build's removed (when it swaps or not).
 */
export type FileChange = { temp: string; target: string } | { remove: string } | { scratch: string };

export function applyChange(change: FileChange): void {
  if ('temp' in change) commit(change.temp, change.target);
  else rmSync('remove' in change ? change.remove : change.scratch, { recursive: true, force: true });
}

/** A build that does not swap: its temporary files and scratch folders removed, nothing else touched. */
export function discardChange(change: FileChange): void {
  if ('temp' in change) discard(change.temp);
  if ('scratch' in change) rmSync(change.scratch, { recursive: true, force: true });
}
