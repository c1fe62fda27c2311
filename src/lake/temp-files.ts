/**
 * Startup hygiene: a run killed with kill -9 leaves hidden temporary files (spills, unfinished
 * Parquet, half-written JSON) behind. None of them is committed data: committed files only ever
 * appear by a rename to their final name. Call this after acquireLock, so no other live run can
 * still own the files it removes.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PROCESS_TAG, tempFileOwner } from '../shared/durable-file.js';
import { lakeRoot, quarantineRoot, runsRoot, stateRoot } from './paths.js';

/** Removes other processes' temporary files under the output directory; returns their paths. */
export async function cleanTemporaryFiles(outDir: string): Promise<string[]> {
  const removed: string[] = [];
  const consider = async (dir: string, name: string) => {
    const owner = tempFileOwner(name);
    if (owner === undefined || owner === PROCESS_TAG) return;
    await rm(join(dir, name), { force: true });
    removed.push(join(dir, name));
  };
  for (const name of await namesIn(outDir)) await consider(outDir, name);
  for (const root of [lakeRoot(outDir), stateRoot(outDir), runsRoot(outDir), quarantineRoot(outDir)]) {
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isFile()) await consider(entry.parentPath, entry.name);
  }
  return removed;
}

async function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}
