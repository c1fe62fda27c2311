/**
 * The warehouse a build makes: a NEW DuckDB file at a temporary path beside the old one, opened writable and tuned
 * for the build, seeded from the previous warehouse (the tables it may keep), swapped in only once everything
 * succeeded.
 */
import { randomBytes } from 'node:crypto';
import { constants, copyFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, quotedIdentifier as quoted, type DuckDBConnection } from '../../shared/duckdb.js';
import type { CheckedBuildOptions } from './build-options.js';
import { firstLine } from '../errors.js';
import type { Project } from '../models/model-files.js';
import { materialization } from '../runner/run-models.js';
import { lookupRowsTable, lookupTable } from '../incremental/lookups.js';
import { readStates, type ModelState } from '../incremental/build-state.js';
import { discard } from '../export/atomic-files.js';

export interface BuildDatabase {
  readonly conn: DuckDBConnection;
  /** Closes the connection and the instance (once; again does nothing), the file complete on disk. */
  close(): void;
}

/**
 * Opens `temp` (created) for a build with `memoryLimit`, spilling beside it. `seed`: a warehouse to start from
 * (copied; an incremental build keeps some of its tables).
 */
export async function openBuildDatabase(temp: string, memoryLimit: string, seed?: string): Promise<BuildDatabase> {
  const opened = writablePath(temp);
  // A reflink where the file system has them (XFS, Btrfs: no bytes copied), else a copy (ext4: 1 GB of
  // warehouse at 10 M orders costs about 1.2 CPU-s).
  if (seed) copyFileSync(seed, opened.path, constants.COPYFILE_FICLONE);
  const instance = await DuckDBInstance.create(opened.path, {
    preserve_insertion_order: 'false',
    memory_limit: memoryLimit,
    temp_directory: `${opened.path}.spill`,
  }).catch((err: unknown) => {
    opened.release();
    throw err;
  });
  const conn = await instance.connect();
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    conn.closeSync();
    instance.closeSync();
    opened.release();
  };
  return { conn, close };
}

/** The settings a build runs under. */
export async function tuneForBuild(conn: DuckDBConnection): Promise<void> {
  await conn.run(`SET TimeZone = 'UTC'`);
  // Settings, not instance options: DuckDB ignores the first as an option and refuses the second.
  // Text is stored plain: trying dictionary and FSST compression on every text column costs about 5 of the
  // build's 34 CPU-s at 10 M orders (half of it on stg_orders' status, brand and currency) and would make
  // the file 2.8 times smaller (330 MB instead of 920). Numbers, dates and timestamps are still compressed.
  await conn.run(`SET disabled_compression_methods = 'fsst,dict_fsst,dictionary'`);
  // Each Parquet footer of the lake is read once per build, not at every query that reads the stream
  // (1,500 order files: 0.07 CPU-s a read). No lake file is ever rewritten under its name (src/lake/file-names.ts).
  await conn.run('SET parquet_metadata_cache = true');
}

/**
 * The path to open a writable database at. DuckDB names its write-ahead log by inserting `.wal` before the
 * first `?` of the (resolved) path, which it reads as the start of options, so in an output folder named
 * `a?b` it would write `a.wal?b/…` and fail. Such a build writes its database in the system's temporary
 * directory instead; `release` (after closing) copies it to `file`, from where it is swapped in as usual.
 */
function writablePath(file: string): { path: string; release: () => void } {
  if (!file.includes('?')) return { path: file, release: () => undefined };
  const elsewhere = join(tmpdir(), `.perks-build-${randomBytes(6).toString('hex')}.duckdb`);
  let released = false;
  return {
    path: elsewhere,
    release: () => {
      if (released) return;
      released = true;
      try {
        if (existsSync(elsewhere)) copyFileSync(elsewhere, file);
      } finally {
        for (const f of [elsewhere, `${elsewhere}.wal`, `${elsewhere}.spill`])
          rmSync(f, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The build's database at `temp`. A build starts from the previous warehouse's tables (a copy: the previous
 * stays as it is): incremental models keep their clean intervals, the others their table when nothing they
 * read changed (model-versions.ts); `--full`: from nothing.
 */
export function openFor(project: Project, options: CheckedBuildOptions, target: string, temp: string) {
  const incremental = project.models.filter((m) => m.header.incremental).map((m) => m.name);
  const seed = !options.full && existsSync(target) ? target : undefined;
  const tables = project.models.filter((m) => materialization(m) === 'table').map((m) => m.name);
  const bookkeeping = incremental.flatMap((m) => [lookupTable(m), lookupRowsTable(m)]);
  return openSeeded(temp, options, seed, [...tables, ...bookkeeping]);
}

/**
 * Drops every table and view of a seeded database but the `keep` tables (none: nothing is kept); returns the
 * tables kept. The rest of the build then starts as from an empty file.
 */
async function keepOnly(conn: DuckDBConnection, keep: string[]): Promise<Set<string>> {
  const reader = await conn.runAndReadAll(
    `SELECT table_name AS name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()
     UNION ALL SELECT view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal AND database_name = current_database()
     ORDER BY kind DESC`,
  );
  const kept = new Set<string>();
  for (const { name, kind } of reader.getRowObjectsJson() as { name: string; kind: string }[]) {
    if (kind === 'TABLE' && keep.includes(name)) kept.add(name);
    else await conn.run(`DROP ${kind} IF EXISTS ${quoted(name)}`);
  }
  return kept;
}

/**
 * The build's database, seeded from the previous warehouse (a copy) with its states and the tables it may keep
 * (`--full`: none). A previous warehouse that cannot be read (damaged, cut short, not DuckDB) is no reason to
 * fail: the build starts from an empty database, as the first build does, and says why (`unreadable`).
 */
async function openSeeded(
  temp: string,
  options: CheckedBuildOptions,
  seed: string | undefined,
  keep: string[],
): Promise<{ db: BuildDatabase; previous: Map<string, ModelState> | null; kept: Set<string>; unreadable?: string }> {
  let unreadable: string | undefined;
  if (seed) {
    let db: BuildDatabase | undefined;
    try {
      db = await openBuildDatabase(temp, options.memoryLimit, seed);
      await tuneForBuild(db.conn);
      const previous = await readStates(db.conn);
      return { db, previous, kept: await keepOnly(db.conn, keep) };
    } catch (err) {
      db?.close();
      discard(temp);
      unreadable = firstLine(err);
    }
  }
  const db = await openBuildDatabase(temp, options.memoryLimit);
  try {
    await tuneForBuild(db.conn);
    const previous = options.full ? null : await readStates(db.conn);
    return { db, previous, kept: await keepOnly(db.conn, []), unreadable };
  } catch (err) {
    db.close();
    throw err;
  }
}
