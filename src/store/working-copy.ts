/**
 * The working copy of a store on this machine: locked for one command at a time, and its local index (what
 * the copy holds, by the store's keys), refused when the folder is another store's copy or no copy at all.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLock, type Lock } from '../lake/index.js';
import { LockedError } from '../lake/errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { StoreClient } from './client.js';
import { StoreError, StoreLockedError } from './errors.js';
import { readLocalIndex, type LocalIndex } from './indexes.js';
import { LOCAL_DIR } from './layout.js';

/** Locks the copy `copy` of the client's store (a second command on this machine waits: exit 5). */
export async function lockCopy(copy: string, client: StoreClient): Promise<Lock> {
  await mkdir(join(copy, LOCAL_DIR), { recursive: true, mode: 0o700 });
  return acquireLock(join(copy, LOCAL_DIR)).catch((err: unknown) => {
    if (err instanceof LockedError)
      throw new StoreLockedError(
        `the working copy ${copy} of ${client.where} is in use by another perks command on this machine; wait, or set PERKS_CACHE_DIR to another folder`,
      );
    throw err;
  });
}

/** The copy's local index; a new copy starts empty (generation 0). */
export async function openLocalIndex(copy: string, client: StoreClient): Promise<LocalIndex> {
  const found = await readLocalIndex(copy);
  if (found && found.store !== client.store.url)
    throw new StoreError(
      `PERKS_CACHE_DIR=${copy} is the working copy of another store (${found.store}): give each store its own folder`,
      ExitCode.config,
    );
  if (found) return found;
  const stray = (await readdir(copy)).filter((n) => n !== LOCAL_DIR);
  if (stray.length)
    throw new StoreError(
      `${copy} holds files (${stray.slice(0, 3).join(', ')}) but is no working copy of ${client.store.url}: empty it or set PERKS_CACHE_DIR to an empty folder`,
      ExitCode.config,
    );
  return { store: client.store.url, generation: 0, files: {} };
}
