/**
 * A publish a killed command left unfinished (its intent still in the store), finished or rolled back by the
 * next writer under its lease: see session.ts's header.
 */
import type { StoreClient } from './client.js';
import { Intent, type RemoteIndex } from './indexes.js';
import { INTENT } from './layout.js';
import { allStreams, writeManifests } from './manifests.js';
import { inParallel } from './parallel.js';
import { collectGarbage, switchViews } from './views.js';

/**
 * Finishes or rolls back the publish whose intent (`body`) a killed command left (under the lease). The
 * intent outlives every step after the commit, so only an intent says a publish may be unfinished: an
 * index that lists garbage or names staged views with no intent beside it is a finished one (see the header).
 */
export async function recover(client: StoreClient, remote: RemoteIndex, body: Buffer): Promise<void> {
  const intent = Intent.safeParse(JSON.parse(body.toString('utf8') || '{}'));
  if (intent.success && intent.data.generation > remote.generation) {
    const named = new Set(Object.values(remote.files).map((e) => e.key));
    await inParallel(
      intent.data.keys.filter((k) => !named.has(k)),
      (k) => client.delete(k),
    );
  } else {
    await writeManifests(client, remote, allStreams(remote));
    await switchViews(client, remote);
    await collectGarbage(client, remote.garbage);
  }
  await client.delete(INTENT);
}
