/**
 * The store's index as this command read it (`_perks/index.json` and its ETag), and its writes: the commit
 * (If-Match on the ETag read, or If-None-Match: * for the first) and the fence. A write the service refuses,
 * or an index found changed before a commit, is told for what happened (changed.ts).
 */
import type { StoreClient } from './client.js';
import { indexChangedError } from './changed.js';
import { PreconditionFailed, StoreError } from './errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { sameEtag } from './etag.js';
import { emptyIndex, parseRemoteIndex, type RemoteIndex } from './indexes.js';
import { INDEX, INTENT, META } from './layout.js';

export class StoreIndex {
  index: RemoteIndex = emptyIndex();
  etag: string | undefined;

  /** `leaseToken`: this writer's lease, named in the errors of an index changed under it. */
  constructor(
    private readonly client: StoreClient,
    private readonly leaseToken: () => string | undefined,
  ) {}

  /**
   * The store's index (none yet: an empty store, provided its prefix holds nothing else). `intent`: whether
   * the caller found an intent (not asked again).
   */
  async read(intent?: boolean): Promise<void> {
    const got = await this.client.get(INDEX);
    if (got) {
      this.index = parseRemoteIndex(got.body.toString('utf8'), this.client.where);
      this.etag = got.etag;
      return;
    }
    this.index = emptyIndex();
    this.etag = undefined;
    if (intent ?? (await this.client.head(INTENT))) return; // a first publish was killed: ours, rolled back by recover()
    const foreign = (await this.client.list('', 5)).filter((o) => !o.path.startsWith(`${META}/`));
    if (foreign.length)
      throw new StoreError(
        `${this.client.where} holds objects (${foreign[0].path}) but no perks index (_perks/index.json): not written by perks; choose an empty prefix`,
        ExitCode.config,
      );
  }

  /**
   * The index written again naming this writer's lease: a writer whose lease was taken over (it stalled past
   * its TTL) finds the index changed at its next commit and commits nothing (If-Match where the service
   * enforces it, the ETag compared before the commit where it does not).
   *
   * Written only when the store holds an intent. A writer that lost its lease can commit only in the
   * instant between its fresh read of the lease (which succeeded, so before this writer took the lease)
   * and its index write, and its intent is in the store all that time (written before its uploads, removed
   * after its publish). So an intent absent once this writer holds the lease means no such commit can come,
   * and the index read after it holds every commit before: no fence is needed, and a command saves a
   * whole write of the index (at small scale a third of what a day's run writes besides its files).
   */
  async fence(): Promise<void> {
    const lease = this.leaseToken();
    if (!this.etag || !lease) return;
    await this.write({ ...this.index, lease });
  }

  /** Writes `next` over the index this command read (refused when it changed meanwhile), and holds it. */
  async write(next: RemoteIndex): Promise<void> {
    try {
      const put = await this.client.put(
        INDEX,
        Buffer.from(JSON.stringify(next)),
        this.etag ? { ifMatch: this.etag } : { ifNoneMatch: '*' },
      );
      this.etag = put.etag;
      this.index = next;
    } catch (err) {
      if (err instanceof PreconditionFailed) throw await this.changedUnder(true);
      throw err;
    }
  }

  /** Before a commit: the index's ETag (a HEAD) is still the one read, where the service may not enforce If-Match. */
  async assertUnchanged(): Promise<void> {
    const head = await this.client.head(INDEX);
    if (head?.etag !== this.etag && !sameEtag(head?.etag, this.etag)) throw await this.changedUnder(false);
  }

  /** The index is not the one this command read: what happened, read from the index now (changed.ts). */
  async changedUnder(refused: boolean): Promise<StoreError> {
    const read = { index: this.index, etag: this.etag };
    const got = await this.client.get(INDEX);
    let index: RemoteIndex | undefined;
    try {
      index = got ? parseRemoteIndex(got.body.toString('utf8'), this.client.where) : undefined;
    } catch (err) {
      return err as StoreError;
    }
    return indexChangedError(this.client.where, read, { index, etag: got?.etag }, this.leaseToken(), refused);
  }
}
