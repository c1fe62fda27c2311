/**
 * What a path of the output is, for the store:
 * - ignored: never published (locks, temporary files, DuckDB's write-ahead log, the working copy's own index,
 *   and `warehouse.duckdb`: the store keeps it in pieces, `seed/`, from which a copy assembles it: src/transform/warehouse/seed.ts);
 * - a view (`marts/`, `reports/`, `docs/`): derived, read by name by BI tools and
 *   people, so kept under its own name; a publish stages it (stagedViewKey) and copies it to its name only
 *   once the index committed the data it was derived from (session.ts);
 * - committed (everything else: lake, state, runs, closes, quarantine, audit): what later runs depend
 *   on, so never overwritten in place before the index names it (sync.ts).
 * And which parts of the output each command reads, so a working copy downloads only those.
 */
import { posix } from 'node:path';
import { FOLDERS, folderOf, type FolderName } from '../output/index.js';

/** The working copy's own bookkeeping, inside it (hidden): never published. */
export const LOCAL_DIR = '.perks-store';
/** The store's own objects, beside the output's. */
export const META = '_perks';
export const INDEX = `${META}/index.json`;
export const INTENT = `${META}/intent.json`;
export const LEASE = `${META}/lease.json`;
export const WAL = `${META}/wal`;
/**
 * Where a publish uploads the views it changed (`_perks/views/<generation>/<path>`): out of every glob BI
 * tools read, named by the index from its commit on, copied to their own names only after it (switchViews).
 */
const VIEWS = `${META}/views`;
export const stagedViewKey = (path: string, generation: number) => `${VIEWS}/${generation}/${path}`;
export const isStagedView = (key: string) => key.startsWith(`${VIEWS}/`);

export function isIgnored(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1)!;
  return (
    parts[0] === LOCAL_DIR ||
    parts[0] === META ||
    parts[0] === '.locks' ||
    parts.some((p) => p.startsWith('.')) || // hidden: temporary files, locks, takeover guards
    name.includes('.tmp') ||
    name.includes('perks-tmp') ||
    name.endsWith('.wal') ||
    name === 'writeback.lock' ||
    // a whole file that changes at every build (12.8 GB at 100 M orders): published as its pieces, seed/
    path === 'warehouse.duckdb'
  );
}

/** A path in a view folder of the output's table (output/folders.ts: marts, reports, docs). */
export function isView(path: string): boolean {
  const top = folderOf(path);
  return top !== undefined && FOLDERS[top].view;
}

/** Files 0600 in 0700 folders, as the local output keeps them (personal data, state: output/folders.ts). */
export function isPrivate(path: string): boolean {
  const top = folderOf(path);
  return top !== undefined && FOLDERS[top].private;
}

/** The parts of the output a command reads: its top folders (output/folders.ts), with `/`. */
export type Part = `${FolderName}/`;
const CORE: Part[] = ['lake/', 'state/', 'closes/', 'runs/'];

export interface CommandUse {
  /** Takes the store's lease and publishes what it changed. */
  writes: boolean;
  reads: Part[];
}

/** Per command (the first word; `store` with its own: storeCommandName): what it reads, whether it writes. Unlisted: no store use. */
export const COMMANDS: Record<string, CommandUse> = {
  // a build reads the previous build's warehouse (its pieces, seed/, assembled by the command line) and marts,
  // so that a fresh copy's build is as incremental as the machine's that made them (only the months that
  // changed rebuilt, unchanged mart files kept); the other readers of the warehouse read it the same way
  run: { writes: true, reads: [...CORE, 'quarantine/', 'seed/', 'marts/'] },
  extract: { writes: true, reads: [...CORE, 'quarantine/'] },
  forget: { writes: true, reads: [...CORE, 'quarantine/'] },
  compact: { writes: true, reads: CORE },
  build: { writes: true, reads: [...CORE, 'seed/', 'marts/'] },
  // a close and a reopen rebuild and write the month's report (src/close/refresh.ts), as build and report do
  close: { writes: true, reads: [...CORE, 'seed/', 'marts/'] },
  reopen: { writes: true, reads: [...CORE, 'seed/', 'marts/'] },
  writeback: { writes: true, reads: [...CORE, 'seed/', 'marts/'] },
  report: { writes: true, reads: [...CORE, 'seed/', 'marts/'] },
  models: { writes: true, reads: [...CORE, 'seed/'] },
  users: { writes: true, reads: [...CORE, 'audit/'] },
  status: { writes: false, reads: [...CORE, 'seed/', 'marts/'] },
  sql: { writes: false, reads: [...CORE, 'seed/', 'marts/'] },
  closes: { writes: false, reads: ['closes/'] },
  check: { writes: false, reads: [] },
  // `perks store check` is none: it probes the bucket itself (check.ts), with no session, lease or index
  'store push': { writes: true, reads: [] },
};

export function reads(parts: readonly Part[], path: string): boolean {
  return parts.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));
}

/**
 * The key a committed file is uploaded to: its name with `.v<generation>` before the extension
 * (`day-2026-11-15.v12.parquet`, `11.v12.json`). A path is uploaded at most once per generation, so a key
 * is never written twice: the version an index names is never overwritten, and a reader holding an older
 * manifest finds each object it names as it was, or gone (never another content under the same name).
 * The lake keeps `.parquet` and its Hive folders, so a glob over the store still reads it.
 */
export function freshKey(path: string, generation: number): string {
  const dir = posix.dirname(path);
  const name = posix.basename(path);
  const dot = name.lastIndexOf('.');
  const versioned = dot <= 0 ? `${name}.v${generation}` : `${name.slice(0, dot)}.v${generation}${name.slice(dot)}`;
  return dir === '.' ? versioned : `${dir}/${versioned}`;
}

/** The name COMMANDS knows a command by: its first word, and for `perks store` the subcommand too. */
export function storeCommandName(words: readonly (string | number)[]): string {
  const first = String(words[0] ?? '');
  return first === 'store' ? `store ${String(words[1] ?? '')}` : first;
}
