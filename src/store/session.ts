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
import { mkdir, readdir, rm, stat, appendFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { acquireLock, withJournal, type Lock } from '../lake/index.js';
import { LockedError } from '../lake/errors.js';
import { crashPoint } from '../shared/crash-points.js';
import { betweenCommits } from '../shared/output-hooks.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { StoreSettings } from '../config/index.js';
import { StoreClient, clientSettings } from './client.js';
import {
  ensureParent,
  fileMode,
  localChanges,
  removeFile,
  settledMtime,
  stageChanges,
  walkCopy,
  type Change,
} from './copy-files.js';
import { indexChangedError } from './changed.js';
import { PreconditionFailed, StoreError, StoreLockedError } from './errors.js';
import { sameEtag } from './etag.js';
import {
  Intent,
  STORE_FORMAT,
  emptyIndex,
  parseRemoteIndex,
  readLocalIndex,
  writeLocalIndex,
  type LocalIndex,
  type RemoteIndex,
} from './indexes.js';
import { acquireLease, type Lease } from './lease.js';
import { probeConditionalWrites, type ConditionalWrites } from './probe.js';
import {
  COMMANDS,
  INDEX,
  INTENT,
  LOCAL_DIR,
  META,
  freshKey,
  isStagedView,
  isIgnored,
  isView,
  reads,
  stagedViewKey,
  type CommandUse,
} from './layout.js';
import { allStreams, changedStreams, writeManifests } from './manifests.js';
import { workingCopyDir, type StoreUrl } from './url.js';
import { WalWriter, continuation, walJournals } from './wal.js';

export interface PublishResult {
  generation: number;
  files: number;
  /** Bytes of the files that changed (what had to move). */
  changedBytes: number;
  removed: number;
}

const CONCURRENCY = 8;

/** When an extract's progress is published: every `seconds` or `mb` landed, whichever first (0: never). */
export interface CheckpointSettings {
  seconds: number;
  mb: number;
}

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

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

export class StoreSession {
  private remote: RemoteIndex = emptyIndex();
  private remoteEtag: string | undefined;
  private local!: LocalIndex;
  private lease: Lease | undefined;
  private copyLock: Lock | undefined;
  /** WAL pieces this command adopted into its copy: removed once a publish commits them. */
  private adopted: string[] = [];
  /** A publish failed: nothing more of this command may be committed (the next command starts over). */
  private poisoned = false;
  readonly wal: WalWriter;
  readonly publishes: PublishResult[] = [];
  /** What the pull brought down: files and bytes (and the time it took, before the command could start). */
  readonly pulled = { files: 0, bytes: 0, ms: 0 };
  /** Since the last publish: when it was, and the bytes the extract landed since (progress()). */
  private sincePublish = { at: Date.now(), bytes: 0 };
  private checkpointing = false;
  private checkpoints: CheckpointSettings = { seconds: 0, mb: 0 };
  private onLeaseLost: (message: string) => void = () => undefined;

  private constructor(
    readonly client: StoreClient,
    readonly copy: string,
    readonly command: string,
    readonly use: CommandUse,
  ) {
    this.wal = new WalWriter(client, copy);
  }

  static async open(store: StoreUrl, command: string, options: SessionOptions): Promise<StoreSession> {
    const env = options.settings;
    const use = COMMANDS[command] ?? { writes: false, reads: [] };
    const client = new StoreClient(store, env);
    const copy = workingCopyDir(store, clientSettings(env).endpoint, env);
    const session = new StoreSession(client, copy, command, use);
    if (options.checkpoints) session.checkpoints = options.checkpoints;
    if (options.onLeaseLost) session.onLeaseLost = options.onLeaseLost;
    try {
      await session.start(options);
      return session;
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  private async start(options: SessionOptions): Promise<void> {
    await mkdir(join(this.copy, LOCAL_DIR), { recursive: true, mode: 0o700 });
    this.copyLock = await acquireLock(join(this.copy, LOCAL_DIR)).catch((err: unknown) => {
      if (err instanceof LockedError)
        throw new StoreLockedError(
          `the working copy ${this.copy} of ${this.client.where} is in use by another perks command on this machine; wait, or set PERKS_CACHE_DIR to another folder`,
        );
      throw err;
    });
    this.local = await this.openLocalIndex();
    if (this.use.writes) {
      const found = await this.conditionalWrites();
      this.lease = await acquireLease(this.client, this.command, {
        redisUrl: options.redisUrl,
        ttlMs: options.leaseTtlMs,
        onLost: options.onLeaseLost,
        conditionalWrites: () => Promise.resolve(found),
      });
    }
    // a writer reads the intent before the index: see fence()
    const intent = this.use.writes ? await this.client.get(INTENT) : undefined;
    await this.readRemote(this.use.writes ? intent !== undefined : undefined);
    if (intent) {
      await this.fence();
      await this.recover(intent.body);
    }
    if (this.use.reads.length) await this.pull();
    this.sincePublish = { at: Date.now(), bytes: 0 };
  }

  /**
   * What the service does with conditional writes, probed once per working copy (probe.ts), and the form in
   * which this command's If-Match is sent: the one the service takes; none where it refuses even the current
   * ETag (with Redis only: acquireLease refuses a store lease there, and the HEAD before a commit stands in).
   */
  private async conditionalWrites(): Promise<ConditionalWrites> {
    this.local.probe ??= await probeConditionalWrites(this.client);
    const { ifMatch } = this.local.probe;
    this.client.ifMatchForm = ifMatch === 'refused' ? 'off' : ifMatch === 'ignored' ? 'quoted' : ifMatch;
    return this.local.probe;
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
  private async fence(): Promise<void> {
    if (!this.remoteEtag || !this.lease) return;
    const next = { ...this.remote, lease: this.lease.token };
    this.remoteEtag = (await this.putIndex(next)).etag;
    this.remote = next;
  }

  private async openLocalIndex(): Promise<LocalIndex> {
    const found = await readLocalIndex(this.copy);
    if (found && found.store !== this.client.store.url)
      throw new StoreError(
        `PERKS_CACHE_DIR=${this.copy} is the working copy of another store (${found.store}): give each store its own folder`,
        ExitCode.config,
      );
    if (found) return found;
    const stray = (await readdir(this.copy)).filter((n) => n !== LOCAL_DIR);
    if (stray.length)
      throw new StoreError(
        `${this.copy} holds files (${stray.slice(0, 3).join(', ')}) but is no working copy of ${this.client.store.url}: empty it or set PERKS_CACHE_DIR to an empty folder`,
        ExitCode.config,
      );
    return { store: this.client.store.url, generation: 0, files: {} };
  }

  /**
   * The store's index (none yet: an empty store, provided its prefix holds nothing else). `intent`: whether
   * the caller found an intent (not asked again).
   */
  private async readRemote(intent?: boolean): Promise<void> {
    const got = await this.client.get(INDEX);
    if (got) {
      this.remote = parseRemoteIndex(got.body.toString('utf8'), this.client.where);
      this.remoteEtag = got.etag;
      return;
    }
    this.remote = emptyIndex();
    this.remoteEtag = undefined;
    if (intent ?? (await this.client.head(INTENT))) return; // a first publish was killed: ours, rolled back by recover()
    const foreign = (await this.client.list('', 5)).filter((o) => !o.path.startsWith(`${META}/`));
    if (foreign.length)
      throw new StoreError(
        `${this.client.where} holds objects (${foreign[0].path}) but no perks index (_perks/index.json): not written by perks; choose an empty prefix`,
        ExitCode.config,
      );
  }

  /**
   * Finishes or rolls back the publish whose intent (`body`) a killed command left (under the lease). The
   * intent outlives every step after the commit, so only an intent says a publish may be unfinished: an
   * index that lists garbage or names staged views with no intent beside it is a finished one (see the header).
   */
  private async recover(body: Buffer): Promise<void> {
    const intent = Intent.safeParse(JSON.parse(body.toString('utf8') || '{}'));
    if (intent.success && intent.data.generation > this.remote.generation) {
      const named = new Set(Object.values(this.remote.files).map((e) => e.key));
      await inParallel(
        intent.data.keys.filter((k) => !named.has(k)),
        (k) => this.client.delete(k),
      );
    } else {
      await writeManifests(this.client, this.remote, allStreams(this.remote));
      await this.switchViews();
      await this.collectGarbage(this.remote.garbage);
    }
    await this.client.delete(INTENT);
  }

  /**
   * The views the index names at their staged keys, copied to their own names (on the service). Copying
   * again is harmless, so a kill anywhere here is finished by the next writer. The index is not written
   * again: the next commit names them by their own names (and removes the staged objects).
   */
  private async switchViews(): Promise<void> {
    let copied = 0;
    await inParallel(stagedViews(this.remote), async ([path, entry]) => {
      await this.client.copy(entry.key, path);
      if (++copied === 1) crashPoint('store-mid-views');
    });
  }

  /** Removes the objects the committed index lists as garbage (the index is not written again: see the header). */
  private async collectGarbage(garbage: string[]): Promise<void> {
    let first = true;
    await inParallel(garbage, async (k) => {
      await this.client.delete(k);
      if (first) crashPoint('store-mid-garbage');
      first = false;
    });
  }

  private async putIndex(index: RemoteIndex): Promise<{ etag: string }> {
    try {
      return await this.client.put(
        INDEX,
        Buffer.from(JSON.stringify(index)),
        this.remoteEtag ? { ifMatch: this.remoteEtag } : { ifNoneMatch: '*' },
      );
    } catch (err) {
      if (err instanceof PreconditionFailed) throw await this.changedUnder(true);
      throw err;
    }
  }

  /** The index is not the one this command read: what happened, read from the index now (changed.ts). */
  private async changedUnder(refused: boolean): Promise<StoreError> {
    const read = { index: this.remote, etag: this.remoteEtag };
    const got = await this.client.get(INDEX);
    let index: RemoteIndex | undefined;
    try {
      index = got ? parseRemoteIndex(got.body.toString('utf8'), this.client.where) : undefined;
    } catch (err) {
      return err as StoreError;
    }
    return indexChangedError(this.client.where, read, { index, etag: got?.etag }, this.lease?.token, refused);
  }

  /**
   * Makes the copy what the index names, for the parts the command reads: local changes a killed or
   * failed command left are dropped (the store is the record), changed files downloaded, files gone from
   * the store removed; a journal the store holds write-ahead pieces of is brought up to date.
   */
  async pull(): Promise<void> {
    const started = Date.now();
    try {
      await this.pullRetrying();
    } finally {
      this.pulled.ms += Date.now() - started;
    }
  }

  private async pullRetrying(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.pullOnce();
        return;
      } catch (err) {
        if (!(err instanceof Vanished)) throw err;
        // a reader racing a publish: an object named by the index it read was replaced; read it again
        const read = { index: this.remote, etag: this.remoteEtag };
        await this.readRemote();
        if (this.remoteEtag === read.etag) throw await this.missing();
        if (this.use.writes)
          throw indexChangedError(
            this.client.where,
            read,
            { index: this.remote, etag: this.remoteEtag },
            this.lease?.token,
            false,
          );
        if (attempt >= 5)
          throw new StoreError(`${err.message}: the store kept changing; run it again`, ExitCode.failed);
      }
    }
  }

  /** The index did not change, yet an object it names is gone or another: it was copied without them, or they were removed. */
  private async missing(): Promise<StoreError> {
    const gone: string[] = [];
    await inParallel(Object.values(this.remote.files), async (e) => {
      if (!(await this.client.head(e.key))) gone.push(e.key);
    });
    gone.sort();
    const named = gone.length
      ? `${gone.length} object${gone.length === 1 ? '' : 's'} it names ${gone.length === 1 ? 'is' : 'are'} missing (${gone
          .slice(0, 3)
          .map((k) => this.client.url(k))
          .join(', ')}${gone.length > 3 ? ', …' : ''})`
      : 'an object it names changed under it';
    return new StoreError(
      `the store ${this.client.where} is not whole: its index (_perks/index.json) is unchanged, but ${named}; the index was copied without its objects, or they were removed: restore them (copy the whole prefix, or from the bucket's versions), then run it again`,
      ExitCode.config,
    );
  }

  private async pullOnce(): Promise<void> {
    const files = await walkCopy(this.copy);
    const { changed } = await localChanges(this.copy, this.local, files);
    for (const c of changed) {
      await removeFile(this.copy, c.path);
      delete this.local.files[c.path];
    }
    for (const path of Object.keys(this.local.files)) if (!files.has(path)) delete this.local.files[path];
    const wanted: string[] = [];
    for (const [path, entry] of Object.entries(this.remote.files)) {
      const mine = this.local.files[path];
      const current = mine && mine.key === entry.key && mine.etag === entry.etag;
      if (current) continue;
      if (mine?.sha256 === entry.sha256) {
        // the same bytes under another key (a view the index named at its staged key, now by its own name)
        this.local.files[path] = { ...mine, key: entry.key, etag: entry.etag };
        continue;
      }
      if (mine) {
        await removeFile(this.copy, path);
        delete this.local.files[path];
      }
      if (reads(this.use.reads, path)) wanted.push(path);
    }
    for (const path of Object.keys(this.local.files))
      if (!this.remote.files[path]) {
        await removeFile(this.copy, path);
        delete this.local.files[path];
      }
    await inParallel(wanted, (path) => this.download(path));
    this.local.generation = this.remote.generation;
    await writeLocalIndex(this.copy, this.local);
    if (this.use.reads.includes('state/')) await this.adoptWal();
  }

  private async download(path: string): Promise<void> {
    const entry = this.remote.files[path];
    await ensureParent(this.copy, path);
    const file = join(this.copy, path);
    const got = await this.client.getToFile(entry.key, file, fileMode(path));
    if (!got || (got.etag && entry.etag && got.etag !== entry.etag && !isView(path))) {
      await removeFile(this.copy, path);
      throw new Vanished(`${this.client.url(entry.key)} changed under this command`);
    }
    const s = await stat(file);
    this.pulled.files++;
    this.pulled.bytes += s.size;
    this.local.files[path] = {
      key: entry.key,
      etag: got.etag,
      size: s.size,
      mtimeMs: settledMtime(s.mtimeMs),
      sha256: entry.sha256,
    };
  }

  private async adoptWal(): Promise<void> {
    for (const [path, pieces] of await walJournals(this.client)) {
      const file = join(this.copy, path);
      const size = (await stat(file).catch(() => undefined))?.size ?? 0;
      await ensureParent(this.copy, path);
      for (const p of continuation(pieces, size)) {
        const got = await this.client.get(p.key);
        if (got) await appendFile(file, got.body, { mode: 0o600 });
      }
      this.adopted.push(...pieces.map((p) => p.key));
    }
  }

  /** The store's committed generation as this command read it (0: an empty store). */
  get generation(): number {
    return this.remote.generation;
  }

  /**
   * Publishes what the command changed in the copy (nothing changed: no request). `live`: other work may be
   * committing in the copy meanwhile (an extract's windows): the copy is staged during a turn of the lake's
   * journal.
   */
  async publish(options: { live?: boolean } = {}): Promise<PublishResult | undefined> {
    if (this.poisoned || !this.use.writes) return undefined;
    try {
      const result = await this.publishOnce(options.live === true);
      if (result) this.publishes.push(result);
      return result;
    } catch (err) {
      this.poisoned = true;
      throw err;
    } finally {
      this.sincePublish = { at: Date.now(), bytes: 0 };
    }
  }

  /**
   * The extract committed more (`bytes` landed since its last call): a lease found lost stops it here; a
   * checkpoint publishes when the interval says so (one at a time: a call meanwhile returns at once).
   */
  async progress(bytes: number): Promise<void> {
    try {
      this.lease?.assertHeld();
    } catch (err) {
      this.leaseLost(err);
    }
    if (this.poisoned || !this.use.writes) return;
    this.sincePublish.bytes += bytes;
    const { seconds, mb } = this.checkpoints;
    const due =
      (seconds > 0 && Date.now() - this.sincePublish.at >= seconds * 1000) ||
      (mb > 0 && this.sincePublish.bytes >= mb * 1024 * 1024);
    if (!due || this.checkpointing) return;
    this.checkpointing = true;
    try {
      await this.publish({ live: true });
    } finally {
      this.checkpointing = false;
    }
  }

  /** A lease found lost (by the heartbeat, or the fence's fresh read) stops the command at once (onLeaseLost). */
  private leaseLost(err: unknown): never {
    if (err instanceof StoreLockedError) this.onLeaseLost(err.message);
    throw err;
  }

  private async publishOnce(live: boolean): Promise<PublishResult | undefined> {
    this.lease?.assertHeld();
    const stage = join(this.copy, LOCAL_DIR, 'stage');
    try {
      const snapshot = () => stageChanges(this.copy, this.local, stage);
      // live: no unit of commits half done (the extract's commit gate), no switch of lake files under way
      const { changed, removed } = live
        ? await betweenCommits(() => withJournal(this.copy, snapshot))
        : await snapshot();
      // paths the store no longer keeps (warehouse.duckdb, now kept as seed/) leave the index at the next commit
      const retired = Object.keys(this.remote.files).filter((path) => isIgnored(path) && !removed.includes(path));
      return await this.commit(changed, [...removed, ...retired]);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  private async commit(changed: Change[], removed: string[]): Promise<PublishResult | undefined> {
    const extra = [...this.wal.pieces.splice(0), ...this.adopted.splice(0)];
    if (!changed.length && !removed.length && !extra.length) return undefined;
    const head = await this.client.head(INDEX);
    if (head?.etag !== this.remoteEtag && !sameEtag(head?.etag, this.remoteEtag)) throw await this.changedUnder(false);
    const previous = this.remote;
    const generation = previous.generation + 1;
    const keys = new Map<string, string>();
    for (const c of changed)
      keys.set(c.path, isView(c.path) ? stagedViewKey(c.path, generation) : freshKey(c.path, generation));
    const intent: Intent = { generation, keys: [...keys.values()], started_at: new Date().toISOString() };
    await this.client.put(INTENT, Buffer.from(JSON.stringify(intent)));
    const etags = new Map<string, string>();
    let uploaded = 0;
    await inParallel(changed, async (c: Change) => {
      const r = await this.client.put(keys.get(c.path)!, { file: c.source ?? join(this.copy, c.path), size: c.size });
      etags.set(c.path, r.etag);
      if (++uploaded === 1) crashPoint('store-mid-upload');
    });
    crashPoint('store-before-commit');
    const { files, garbage } = nextFiles(previous, changed, removed, extra, (path) => ({
      key: keys.get(path)!,
      etag: etags.get(path)!,
    }));
    const next: RemoteIndex = {
      format: STORE_FORMAT,
      generation,
      published_at: new Date().toISOString(),
      by: { host: hostname(), pid: process.pid, command: this.command },
      files,
      garbage,
      ...(this.lease ? { lease: this.lease.token } : {}),
    };
    await this.lease?.verify().catch((err: unknown) => this.leaseLost(err));
    this.remoteEtag = (await this.putIndex(next)).etag;
    this.remote = next;
    crashPoint('store-after-commit');
    await writeManifests(this.client, next, changedStreams([...changed.map((c) => c.path), ...removed]), previous);
    await this.switchViews();
    await this.collectGarbage(this.remote.garbage);
    await this.client.delete(INTENT);
    for (const c of changed) {
      const entry = this.remote.files[c.path];
      this.local.files[c.path] = {
        key: entry.key,
        etag: entry.etag,
        size: c.size,
        mtimeMs: settledMtime(c.mtimeMs),
        sha256: c.sha256,
      };
      if (c.path.startsWith('state/writeback/')) this.wal.committed(c.path, c.size);
    }
    for (const path of removed) delete this.local.files[path];
    this.local.generation = generation;
    await writeLocalIndex(this.copy, this.local);
    return {
      generation,
      files: changed.length,
      changedBytes: changed.reduce((n, c) => n + c.size, 0),
      removed: removed.length,
    };
  }

  /** Releases the lease and the copy's lock (the local index is already saved). */
  async close(): Promise<void> {
    try {
      await this.lease?.release();
    } finally {
      this.lease = undefined;
      await this.copyLock?.release().catch(() => undefined);
      this.copyLock = undefined;
      this.client.destroy();
    }
  }
}

class Vanished extends Error {}

/**
 * The files the next index names and the objects it no longer does (garbage): `previous` with `changed`
 * at the keys they were uploaded to (`uploaded`) and without `removed`; `extra` (write-ahead pieces) is
 * garbage too.
 */
function nextFiles(
  previous: RemoteIndex,
  changed: Change[],
  removed: string[],
  extra: string[],
  uploaded: (path: string) => { key: string; etag: string },
): { files: RemoteIndex['files']; garbage: string[] } {
  const files = { ...previous.files };
  const garbage = new Set<string>(extra);
  // the views the last publish staged were copied to their own names before it removed its intent (or by
  // recover()): named there from this commit on, their staged objects garbage
  for (const [path, entry] of stagedViews(previous)) {
    files[path] = { ...entry, key: path };
    garbage.add(entry.key);
  }
  for (const c of changed) {
    // a view's own name is not garbage: its staged object is copied over it after the commit
    const old = previous.files[c.path]?.key;
    if (old && old !== c.path) garbage.add(old);
    files[c.path] = { ...uploaded(c.path), size: c.size, sha256: c.sha256 };
  }
  for (const path of removed) {
    if (!previous.files[path]) continue;
    garbage.add(previous.files[path].key);
    if (isView(path)) garbage.add(path); // its copy by name, wherever the index named it
    delete files[path];
  }
  return { files, garbage: [...garbage] };
}

/** The index's views at their staged keys: the last publish's (named by their own names at the next commit). */
function stagedViews(index: RemoteIndex): [string, RemoteIndex['files'][string]][] {
  return Object.entries(index.files).filter(([, e]) => isStagedView(e.key));
}

/** A random token, for probe names and tests. */
export const token = () => randomBytes(6).toString('hex');
