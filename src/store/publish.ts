/**
 * A publish (session.ts's header, steps 1 to 6): the copy's changes staged, the intent written, the changed
 * files uploaded to fresh keys, the index committed under the lease, then the readers' manifests, the views
 * by name, the garbage, and the intent removed.
 */
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { withJournal } from '../lake/index.js';
import { crashPoint } from '../shared/crash-points.js';
import { betweenCommits } from '../shared/output-hooks.js';
import type { StoreClient } from './client.js';
import { settledMtime, stageChanges, type Change } from './copy-files.js';
import { Intent, STORE_FORMAT, writeLocalIndex, type LocalIndex, type RemoteIndex } from './indexes.js';
import { INTENT, LOCAL_DIR, freshKey, isIgnored, isView, stagedViewKey } from './layout.js';
import type { LeaseGuard } from './lease-guard.js';
import { changedStreams, writeManifests } from './manifests.js';
import { inParallel } from './parallel.js';
import type { StoreIndex } from './remote-index.js';
import { collectGarbage, stagedViews, switchViews } from './views.js';
import type { WalWriter } from './wal.js';

export interface PublishResult {
  generation: number;
  files: number;
  /** Bytes of the files that changed (what had to move). */
  changedBytes: number;
  removed: number;
}

export class Publisher {
  constructor(
    private readonly client: StoreClient,
    private readonly copy: string,
    private readonly command: string,
    private readonly local: LocalIndex,
    private readonly remote: StoreIndex,
    private readonly lease: LeaseGuard,
    private readonly wal: WalWriter,
    /** WAL pieces the pull adopted: garbage once a publish commits them. */
    private readonly adopted: () => string[],
  ) {}

  /**
   * Publishes what the command changed in the copy (nothing changed: no request). `live`: other work may be
   * committing in the copy meanwhile (an extract's windows): the copy is staged during a turn of the lake's
   * journal.
   */
  async publishOnce(live: boolean): Promise<PublishResult | undefined> {
    this.lease.assertHeld();
    const stage = join(this.copy, LOCAL_DIR, 'stage');
    try {
      const snapshot = () => stageChanges(this.copy, this.local, stage);
      // live: no unit of commits half done (the extract's commit gate), no switch of lake files under way
      const { changed, removed } = live
        ? await betweenCommits(() => withJournal(this.copy, snapshot))
        : await snapshot();
      // paths the store no longer keeps (warehouse.duckdb, now kept as seed/) leave the index at the next commit
      const retired = Object.keys(this.remote.index.files).filter((path) => isIgnored(path) && !removed.includes(path));
      return await this.commit(changed, [...removed, ...retired]);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  private async commit(changed: Change[], removed: string[]): Promise<PublishResult | undefined> {
    const extra = [...this.wal.pieces.splice(0), ...this.adopted()];
    if (!changed.length && !removed.length && !extra.length) return undefined;
    await this.remote.assertUnchanged();
    const previous = this.remote.index;
    const generation = previous.generation + 1;
    const keys = new Map<string, string>();
    for (const c of changed)
      keys.set(c.path, isView(c.path) ? stagedViewKey(c.path, generation) : freshKey(c.path, generation));
    const intent: Intent = { generation, keys: [...keys.values()], started_at: new Date().toISOString() };
    await this.client.put(INTENT, Buffer.from(JSON.stringify(intent)));
    const etags = await this.upload(changed, keys);
    crashPoint('store-before-commit');
    const { files, garbage } = nextFiles(previous, changed, removed, extra, (path) => ({
      key: keys.get(path)!,
      etag: etags.get(path)!,
    }));
    const lease = this.lease.token;
    const next: RemoteIndex = {
      format: STORE_FORMAT,
      generation,
      published_at: new Date().toISOString(),
      by: { host: hostname(), pid: process.pid, command: this.command },
      files,
      garbage,
      ...(lease ? { lease } : {}),
    };
    await this.lease.verify();
    await this.remote.write(next);
    crashPoint('store-after-commit');
    await writeManifests(this.client, next, changedStreams([...changed.map((c) => c.path), ...removed]), previous);
    await switchViews(this.client, next);
    await collectGarbage(this.client, next.garbage);
    await this.client.delete(INTENT);
    await this.committed(next, changed, removed);
    return {
      generation,
      files: changed.length,
      changedBytes: changed.reduce((n, c) => n + c.size, 0),
      removed: removed.length,
    };
  }

  /** The changed files uploaded to their fresh keys: each one's ETag. */
  private async upload(changed: Change[], keys: Map<string, string>): Promise<Map<string, string>> {
    const etags = new Map<string, string>();
    let uploaded = 0;
    await inParallel(changed, async (c: Change) => {
      const r = await this.client.put(keys.get(c.path)!, { file: c.source ?? join(this.copy, c.path), size: c.size });
      etags.set(c.path, r.etag);
      if (++uploaded === 1) crashPoint('store-mid-upload');
    });
    return etags;
  }

  /** The local index after a commit: the changed files at their keys, the removed ones gone. */
  private async committed(next: RemoteIndex, changed: Change[], removed: string[]): Promise<void> {
    for (const c of changed) {
      const entry = next.files[c.path];
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
    this.local.generation = next.generation;
    await writeLocalIndex(this.copy, this.local);
  }
}

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
