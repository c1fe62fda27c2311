/**
 * The pull: the working copy made what the store's index names, for the parts the command reads (a reader
 * racing a publish reads the index again), and the write-ahead pieces the store holds appended to their
 * journals (wal.ts).
 */
import { appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreClient } from './client.js';
import { ensureParent, fileMode, localChanges, removeFile, settledMtime, walkCopy } from './copy-files.js';
import { indexChangedError } from './changed.js';
import { StoreError } from './errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { writeLocalIndex, type LocalIndex } from './indexes.js';
import { isView, reads, type CommandUse } from './layout.js';
import { inParallel } from './parallel.js';
import type { StoreIndex } from './remote-index.js';
import { continuation, walJournals } from './wal.js';

/** What a pull brought down: files and bytes (and the time it took, before the command could start). */
export interface Pulled {
  files: number;
  bytes: number;
  ms: number;
}

export class Puller {
  /** WAL pieces this command adopted into its copy: removed once a publish commits them (takeAdopted()). */
  private adopted: string[] = [];

  constructor(
    private readonly client: StoreClient,
    private readonly copy: string,
    private readonly use: CommandUse,
    private readonly local: LocalIndex,
    private readonly remote: StoreIndex,
    private readonly leaseToken: () => string | undefined,
    readonly pulled: Pulled,
  ) {}

  /** The WAL pieces adopted since the last call (the next commit lists them as garbage). */
  takeAdopted(): string[] {
    return this.adopted.splice(0);
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
        const read = { index: this.remote.index, etag: this.remote.etag };
        await this.remote.read();
        if (this.remote.etag === read.etag) throw await this.missing();
        if (this.use.writes)
          throw indexChangedError(
            this.client.where,
            read,
            { index: this.remote.index, etag: this.remote.etag },
            this.leaseToken(),
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
    await inParallel(Object.values(this.remote.index.files), async (e) => {
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
      `the store ${this.client.where} is not whole: its index (_perks/index.json) is unchanged, but ${named}; ` +
        `the index was copied without its objects, or they were removed: restore them (copy the whole prefix, ` +
        `or from the bucket's versions), then run it again`,
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
    const remote = this.remote.index;
    const wanted: string[] = [];
    for (const [path, entry] of Object.entries(remote.files)) {
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
      if (!remote.files[path]) {
        await removeFile(this.copy, path);
        delete this.local.files[path];
      }
    await inParallel(wanted, (path) => this.download(path));
    this.local.generation = remote.generation;
    await writeLocalIndex(this.copy, this.local);
    if (this.use.reads.includes('state/')) await this.adoptWal();
  }

  private async download(path: string): Promise<void> {
    const entry = this.remote.index.files[path];
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
}

class Vanished extends Error {}
