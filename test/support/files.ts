/** What a folder holds, to see exactly what a command or a write left behind. */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `dir` (none if it does not exist), as paths relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}
