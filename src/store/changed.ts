/**
 * Why the store's index is not the one a writing command read, said from the index itself, so that a message
 * names what happened: another machine published (a higher generation), another run took the lease over and
 * fenced the index (the same generation, another lease token), or nothing another writer did, which is the
 * service refusing a conditional write it should take (a dialect of If-Match the probe did not see) or
 * changing an ETag under the same content. Only the first two say "another machine".
 */
import { ExitCode } from '../shared/exit-codes.js';
import { StoreError, StoreLockedError } from './errors.js';
import { sameEtag } from './etag.js';
import type { RemoteIndex } from './indexes.js';

export interface IndexSeen {
  index: RemoteIndex | undefined;
  etag: string | undefined;
}

const NOTHING = 'nothing of this command was committed';

/**
 * The error for a commit refused (`refused`: the service answered 412 to the index's write) or found out of
 * date (its HEAD), from the index as this command read it (`read`), as it is now (`now`) and the lease it holds.
 */
export function indexChangedError(
  where: string,
  read: IndexSeen,
  now: IndexSeen,
  leaseToken: string | undefined,
  refused: boolean,
): StoreError {
  const before = read.index?.generation ?? 0;
  const after = now.index;
  if (after && after.generation > before) {
    const by = after.by;
    return new StoreLockedError(
      `the store ${where} changed while this command ran: ` +
        `another machine published generation ${after.generation} (\`perks ${by.command}\` pid ${by.pid} on ${by.host}, ` +
        `at ${after.published_at}; this command read generation ${before}): ${NOTHING}; run it again`,
    );
  }
  if (after?.lease && after.lease !== leaseToken && after.lease !== read.index?.lease)
    return new StoreLockedError(
      `the store ${where} changed while this command ran: ` +
        `another run took its lease over and fenced the index (generation ${after.generation}): ${NOTHING}; run it again once that run is done`,
    );
  if (!after && read.index)
    return new StoreError(
      `the store ${where} lost its index (_perks/index.json) while this command ran (it read generation ${before}): ` +
        `${NOTHING}; restore the index (the bucket's versions) before anything else writes`,
      ExitCode.failed,
    );
  if (refused && sameEtag(now.etag, read.etag))
    return new StoreError(
      `the store ${where} refused the commit's conditional write (HTTP 412 to If-Match on the index's current ETag` +
        ` ${now.etag ?? ''}): the service does not honour If-Match as it was probed; ` +
        `run \`perks store check\` and see docs/reference/store.md (providers); ${NOTHING}`,
      ExitCode.config,
    );
  return new StoreError(
    `the store ${where}'s index changed its ETag while this command ran (${read.etag ?? 'none'} →` +
      ` ${now.etag ?? 'none'}) but names no other writer (generation ${after?.generation ?? 0}, as read): ${NOTHING}; ` +
      `run it again, and if it recurs run \`perks store check\``,
    ExitCode.failed,
  );
}
