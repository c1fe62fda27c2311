/**
 * After a commit (session.ts's header, steps 5 and 6): the views the index names at their staged keys copied
 * to their own names, then the objects it lists as garbage removed. Both are harmless to do again, so a kill
 * anywhere here is finished by the next writer (recovery.ts).
 */
import { crashPoint } from '../shared/crash-points.js';
import type { StoreClient } from './client.js';
import type { RemoteIndex } from './indexes.js';
import { isStagedView } from './layout.js';
import { inParallel } from './parallel.js';

/**
 * The views the index names at their staged keys, copied to their own names (on the service). The index is
 * not written again: the next commit names them by their own names (and removes the staged objects).
 */
export async function switchViews(client: StoreClient, index: RemoteIndex): Promise<void> {
  let copied = 0;
  await inParallel(stagedViews(index), async ([path, entry]) => {
    await client.copy(entry.key, path);
    if (++copied === 1) crashPoint('store-mid-views');
  });
}

/** Removes the objects the committed index lists as garbage (the index is not written again: see session.ts). */
export async function collectGarbage(client: StoreClient, garbage: string[]): Promise<void> {
  let first = true;
  await inParallel(garbage, async (k) => {
    await client.delete(k);
    if (first) crashPoint('store-mid-garbage');
    first = false;
  });
}

/** The index's views at their staged keys: the last publish's (named by their own names at the next commit). */
export function stagedViews(index: RemoteIndex): [string, RemoteIndex['files'][string]][] {
  return Object.entries(index.files).filter(([, e]) => isStagedView(e.key));
}
