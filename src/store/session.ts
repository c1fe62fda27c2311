/**
 * One command against a store: the working copy is locked on this machine, the store's lease taken (a
 * command that writes), a publish another machine left unfinished completed or rolled back, the copy
 * reset to what the store's index names and brought up to date for what the command reads, and after the
 * command (or at a checkpoint) what it changed published:
 *
 *   1. `_perks/intent.json` names the keys about to be written (so a kill here is rolled back);
 *   2. every new or changed file is uploaded to a key never written before: committed files as
 *      `name.v<generation>.ext`, views (warehouse, marts, reports, docs) under `_perks/views/<generation>/`;
 *   3. `_perks/index.json` is written: the commit (If-Match on the ETag read at the start, or
 *      If-None-Match: * for the first), fenced by the lease (verified just before); it names this
 *      publish's views at their staged keys, the previous publish's at their own names (copied there when
 *      that publish finished), and lists as garbage the objects it no longer names;
 *   4. the readers' manifests of the streams that changed (manifests.ts);
 *   5. the views are copied to their own names (what BI tools read by name changes only now);
 *   6. the garbage is removed, then the intent: its removal marks the publish finished.
 * The index is written once per publish (and at a command's start only to fence off a publish left in
 * flight: fence()). After 3 it is not written again (until issue 42 it was, twice: at small scale a third
 * of a day's upload), so it keeps naming the staged views (the same bytes as under their names) until the
 * next commit, and keeps listing garbage already removed (removing it again is harmless).
 * Killed before 3: the next writer removes what the intent names (nothing counted it). Killed after 3
 * (the intent still there): the next writer finishes 4 to 6. Either way a reader never sees data a
 * pointer does not name, nor a pointer to data not there, and a view by name is never newer than the
 * commit it was derived from.
 *
 * While an extract runs, `progress()` publishes what it committed so far at the checkpoint interval (a
 * "live" publish: the copy is staged while no unit of the extract's commits is half done and no switch of
 * lake files under way, so windows landing beside it cannot tear it): a killed extract is continued by any
 * machine from its last checkpoint.
 */
import { randomBytes } from 'node:crypto';
import type { Lock } from '../lake/index.js';
import type { StoreSettings } from '../config/index.js';
import { Checkpoints, type CheckpointSettings } from './checkpoints.js';
import { StoreClient, clientSettings } from './client.js';
import { COMMANDS, INTENT, type CommandUse } from './layout.js';
import { LeaseGuard } from './lease-guard.js';
import { Publisher, type PublishResult } from './publish.js';
import { Puller, type Pulled } from './pull.js';
import { recover } from './recovery.js';
import { StoreIndex } from './remote-index.js';
import { workingCopyDir, type StoreUrl } from './url.js';
import { WalWriter } from './wal.js';
import { lockCopy, openLocalIndex } from './working-copy.js';

export type { CheckpointSettings } from './checkpoints.js';
export type { PublishResult } from './publish.js';

export interface SessionOptions {
  /** The working copy's place and the SDK's settings (src/config). */
  settings: StoreSettings;
  redisUrl?: string;
  /** The lease's time to live after its last heartbeat (ms). */
  leaseTtlMs?: number;
  checkpoints?: CheckpointSettings;
  /** Called once when the lease's heartbeat finds it taken: nothing more may be committed. */
  onLeaseLost?: (message: string) => void;
}

/**
 * The session owns its parts, one responsibility each: the copy's lock and local index (working-copy.ts), the
 * lease (lease-guard.ts), the store's index and its fence (remote-index.ts), a publish left unfinished
 * (recovery.ts), the pull (pull.ts), the publish and commit (publish.ts, views.ts) and the checkpoints
 * (checkpoints.ts); it says in which order they act.
 */
export class StoreSession {
  private readonly remote: StoreIndex;
  private readonly lease: LeaseGuard;
  private readonly checkpoints: Checkpoints;
  private copyLock: Lock | undefined;
  private puller: Puller | undefined;
  private publisher: Publisher | undefined;
  /** A publish failed: nothing more of this command may be committed (the next command starts over). */
  private poisoned = false;
  readonly wal: WalWriter;
  readonly publishes: PublishResult[] = [];
  /** What the pull brought down: files and bytes (and the time it took, before the command could start). */
  readonly pulled: Pulled = { files: 0, bytes: 0, ms: 0 };

  private constructor(
    readonly client: StoreClient,
    readonly copy: string,
    readonly command: string,
    readonly use: CommandUse,
    options: SessionOptions,
  ) {
    this.wal = new WalWriter(client, copy);
    this.lease = new LeaseGuard(options.onLeaseLost);
    this.remote = new StoreIndex(client, () => this.lease.token);
    this.checkpoints = new Checkpoints(options.checkpoints);
  }

  static async open(store: StoreUrl, command: string, options: SessionOptions): Promise<StoreSession> {
    const env = options.settings;
    const use = COMMANDS[command] ?? { writes: false, reads: [] };
    const client = new StoreClient(store, env);
    const copy = workingCopyDir(store, clientSettings(env).endpoint, env);
    const session = new StoreSession(client, copy, command, use, options);
    try {
      await session.start(options);
      return session;
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  private async start(options: SessionOptions): Promise<void> {
    this.copyLock = await lockCopy(this.copy, this.client);
    const local = await openLocalIndex(this.copy, this.client);
    const leaseToken = () => this.lease.token;
    const puller = new Puller(this.client, this.copy, this.use, local, this.remote, leaseToken, this.pulled);
    this.puller = puller;
    this.publisher = new Publisher(this.client, this.copy, this.command, local, this.remote, this.lease, this.wal, () =>
      puller.takeAdopted(),
    );
    if (this.use.writes)
      await this.lease.acquire(this.client, local, this.command, {
        redisUrl: options.redisUrl,
        ttlMs: options.leaseTtlMs,
        onLost: options.onLeaseLost,
      });
    // a writer reads the intent before the index: see StoreIndex.fence()
    const intent = this.use.writes ? await this.client.get(INTENT) : undefined;
    await this.remote.read(this.use.writes ? intent !== undefined : undefined);
    if (intent) {
      await this.remote.fence();
      await recover(this.client, this.remote.index, intent.body);
    }
    if (this.use.reads.length) await this.pull();
    this.checkpoints.reset();
  }

  /** Makes the copy what the index names, for the parts the command reads (pull.ts). */
  async pull(): Promise<void> {
    await this.puller!.pull();
  }

  /** The store's committed generation as this command read it (0: an empty store). */
  get generation(): number {
    return this.remote.index.generation;
  }

  /**
   * Publishes what the command changed in the copy (nothing changed: no request). `live`: other work may be
   * committing in the copy meanwhile (an extract's windows): the copy is staged during a turn of the lake's
   * journal.
   */
  async publish(options: { live?: boolean } = {}): Promise<PublishResult | undefined> {
    if (this.poisoned || !this.use.writes) return undefined;
    try {
      const result = await this.publisher!.publishOnce(options.live === true);
      if (result) this.publishes.push(result);
      return result;
    } catch (err) {
      this.poisoned = true;
      throw err;
    } finally {
      this.checkpoints.reset();
    }
  }

  /**
   * The extract committed more (`bytes` landed since its last call): a lease found lost stops it here; a
   * checkpoint publishes when the interval says so (one at a time: a call meanwhile returns at once).
   */
  async progress(bytes: number): Promise<void> {
    this.lease.stopIfLost();
    if (this.poisoned || !this.use.writes) return;
    await this.checkpoints.landed(bytes, () => this.publish({ live: true }));
  }

  /** Releases the lease and the copy's lock (the local index is already saved). */
  async close(): Promise<void> {
    try {
      await this.lease.release();
    } finally {
      await this.copyLock?.release().catch(() => undefined);
      this.copyLock = undefined;
      this.client.destroy();
    }
  }
}

/** A random token, for probe names and tests. */
export const token = () => randomBytes(6).toString('hex');
