/**
 * Incremental state: `<out>/state/<stream>/<key>.json`, one JSON document per stream and group.
 * Written atomically (temp, fsync, rename, fsync dir) so a run killed mid-write leaves the old
 * state or the new one. Files 0600 in 0700 folders; looser modes found on disk are tightened.
 * A file that is not JSON (or fails the caller's schema) stops the run with CorruptStateError.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { ensureDir, writeJsonAtomic } from './atomic-file.js';
import { CorruptStateError } from './errors.js';
import { tightenTree } from './modes.js';
import { safeIdentifier, safeSegment, stateRoot } from './paths.js';
import { crashPoint } from '../shared/crash-points.js';
import { camelKeys, snakeKeys } from '../shared/json-keys.js';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export interface StateStoreOptions {
  /**
   * The code's values are camelCase and the files snake_case (the extract's states: `first_day`, `lookback_days`,
   * docs/reference/operations.md "JSON keys"): written snake_case, read in either spelling (a file of an older
   * release). Off for values whose code already names its keys in snake_case (the erasure queue).
   */
  snakeCaseFile?: boolean;
}

export class StateStore {
  private tightened?: Promise<void>;

  constructor(
    readonly outDir: string,
    private readonly options: StateStoreOptions = {},
  ) {}

  fileOf(stream: string, key: string): string {
    return join(stateRoot(this.outDir), safeIdentifier('stream name', stream), `${safeSegment('state key', key)}.json`);
  }

  /** The stored value, or undefined when there is none; `schema` checks its shape. */
  async read<T = unknown>(stream: string, key: string, schema?: z.ZodType<T>): Promise<T | undefined> {
    const file = this.fileOf(stream, key);
    await this.tightenOnce();
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new CorruptStateError(file, text.trim() ? 'not valid JSON' : 'empty');
    }
    if (this.options.snakeCaseFile) value = camelKeys(value);
    if (!schema) return value as T;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new CorruptStateError(file, `${issue.path.join('.') || 'value'}: ${issue.message}`);
  }

  async write(stream: string, key: string, value: unknown): Promise<void> {
    const file = this.fileOf(stream, key);
    await this.tightenOnce();
    await ensureDir(stateRoot(this.outDir), DIR_MODE);
    const stored = this.options.snakeCaseFile ? snakeKeys(value) : value;
    await writeJsonAtomic(file, stored, { mode: FILE_MODE, dirMode: DIR_MODE });
    crashPoint('after-state');
  }

  /** Once per store: folders 0700 and files 0600 under <out>/state, whatever an older run or a copy left. */
  private tightenOnce(): Promise<void> {
    this.tightened ??= tightenTree(stateRoot(this.outDir), { dir: DIR_MODE, file: FILE_MODE });
    return this.tightened;
  }
}
