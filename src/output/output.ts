/**
 * The output, as one value: the folder a command reads and writes (absolute), whether it is a store's working
 * copy, the moments its work must be made durable (hooks), and the map of its top folders. Made once per
 * command by the command line's middleware (store/lazy.ts); it is the only thing a stage is told about where it
 * writes.
 */
import { join, resolve } from 'node:path';
import { LOCAL_OUTPUT_HOOKS, type OutputHooks } from '../shared/output-hooks.js';
import { FOLDERS, type FolderName } from './folders.js';

export interface Output {
  /** The folder, absolute: a local folder, or a store's working copy. */
  readonly dir: string;
  /** The store's URL (s3://bucket/prefix) when the folder is its working copy; undefined for a local folder. */
  readonly store?: string;
  /**
   * What a person is shown as the output: the store's URL, else the folder as given (./output, not the
   * machine's absolute path: `perks status` is shared).
   */
  readonly name: string;
  /** The stages' moments of durability (shared/output-hooks.ts): the store's, or a local folder's no-ops. */
  readonly hooks: OutputHooks;
  /** `warehouse.duckdb`, the built warehouse. */
  readonly warehouse: string;
  readonly lake: string;
  readonly runs: string;
  readonly closes: string;
  readonly quarantine: string;
  readonly audit: string;
  readonly seed: string;
  readonly marts: string;
  readonly reports: string;
  readonly docs: string;
  /** `state/`, or a stage's or stream's folder in it: `state('writeback')`. */
  state(...names: string[]): string;
}

/** The output in `dir` (made absolute): a local folder's, unless a store's URL and hooks are given. */
export function outputAt(dir: string, store?: { url: string; hooks: OutputHooks }): Output {
  const abs = resolve(dir);
  const folders = Object.fromEntries(Object.keys(FOLDERS).map((name) => [name, join(abs, name)])) as Record<
    FolderName,
    string
  >;
  return {
    ...folders,
    dir: abs,
    store: store?.url,
    name: store?.url ?? dir,
    hooks: store?.hooks ?? LOCAL_OUTPUT_HOOKS,
    warehouse: join(abs, 'warehouse.duckdb'),
    state: (...names: string[]) => join(folders.state, ...names),
  };
}
