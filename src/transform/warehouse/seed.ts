/**
 * The warehouse kept in pieces, `<out>/seed/`, for an output that is a store's working copy: what the next
 * build starts from, in files that change with the data, so that a day's publish uploads the pieces that
 * changed (not a 12.8 GB `warehouse.duckdb` at 100 M orders) and a fresh copy builds as incrementally as the
 * machine that built last.
 *
 * - every table of the warehouse as Parquet: a model built by intervals by month (`seed/<model>/<YYYY-MM>.parquet`,
 *   export-months.ts: only the months the build replaced are written again), every other table as one file
 *   (`seed/<table>.parquet`), written again only when its rows changed (a count and a hash of its rows);
 * - `seed/_seed.json`, written last: the build's token, each table's columns and types, the views' SQL.
 *
 * A working copy whose warehouse is not the seed's (none: a fresh copy; an older one: another machine built
 * since) assembles `warehouse.duckdb` from the pieces (assembleWarehouse): the same tables, types and views,
 * so `perks sql` reads what was built and `perks build` starts from the same state.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  DuckDBInstance,
  quotedIdentifier as id,
  quotedString as str,
  type DuckDBConnection,
} from '../../shared/duckdb.js';
import {
  removeStaleTemps,
  removeStaleTempsIn,
  tempPathFor,
  type FileChange,
  commit,
  discard,
} from '../export/atomic-files.js';
import { openBuildDatabase, tuneForBuild } from './build-database.js';
import { firstLine } from '../errors.js';
import { stageMonthFolder, type MonthFolder } from '../export/export-months.js';
import { useOutputDir } from '../sources/lake-views.js';
import { LOCAL_DIR } from '../../store/layout.js';
import { DEFAULTS } from '../../config/index.js';
import type { FolderName, Output } from '../../output/index.js';

export const SEED_DIR: FolderName = 'seed';
const MANIFEST = '_seed.json';
/** In the warehouse: the token of the seed it was built with or assembled from (compared by ensureWarehouse). */
const SEED_TABLE = '_build_seed';
/** A store's working copy has its own index: its builds keep the seed. */
const WORKING_COPY_INDEX = join(LOCAL_DIR, 'index.json');

const Manifest = z.object({
  format: z.literal(1),
  token: z.string(),
  tables: z.array(
    z.object({
      name: z.string(),
      columns: z.array(z.tuple([z.string(), z.string()])),
      /** by month (a folder) or one file */
      months: z.boolean(),
      /** one-file tables: the count and hash of the rows the file holds */
      fingerprint: z.string().optional(),
    }),
  ),
  /** `CREATE VIEW …` of every view, in an order that may need retrying (a view may read one after it) */
  views: z.array(z.string()),
});
type Manifest = z.infer<typeof Manifest>;

/** Whether builds of the output keep the seed: it is a store's working copy. */
export const keepsSeed = (output: Output): boolean => existsSync(join(output.dir, WORKING_COPY_INDEX));

/** The seed's month folder of a model built by intervals: `time` its month column, the months it replaced. */
export type SeedMonths = Pick<MonthFolder, 'time' | 'replaced' | 'previousToken'>;

export interface SeedFiles {
  written: number;
  kept: number;
  removed: number;
}

/**
 * Stages the seed of the warehouse `conn` holds (every table but the seed's own; its `_build_state` already
 * written) into `<out>/seed/`: `changes` gets what the swap does, the manifest last. `months`: the models
 * kept by month, with what the build replaced.
 */
export async function stageSeed(
  conn: DuckDBConnection,
  output: Output,
  token: string,
  months: Map<string, SeedMonths>,
  changes: FileChange[],
): Promise<SeedFiles> {
  const dir = output.seed;
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // personal data (stg_users…), as the lake
  removeStaleTempsIn(dir);
  const previous = readManifest(dir);
  const before = new Map((previous?.tables ?? []).map((t) => [t.name, t]));
  await conn.run(`CREATE OR REPLACE TABLE ${SEED_TABLE} AS SELECT ${str(token)} AS token`);
  const columns = await tableColumns(conn);
  const files: SeedFiles = { written: 0, kept: 0, removed: 0 };
  const tables: Manifest['tables'] = [];
  for (const [name, cols] of columns) {
    if (name === SEED_TABLE) continue;
    const folder = months.get(name);
    if (folder && !cols.some(([, type]) => type.includes('INTERVAL'))) {
      const f = await stageMonthFolder(conn, name, join(dir, name), { ...folder, token }, changes);
      files.written += f.written;
      files.kept += f.kept;
      files.removed += f.removed;
      if (before.get(name)?.months === false) changes.push({ remove: join(dir, `${name}.parquet`) });
      tables.push({ name, columns: cols, months: true });
      continue;
    }
    const target = join(dir, `${name}.parquet`);
    const fingerprint = await fingerprintOf(conn, name);
    if (before.get(name)?.fingerprint === fingerprint && existsSync(target)) files.kept++;
    else {
      removeStaleTemps(target);
      const temp = tempPathFor(target);
      changes.push({ temp, target });
      // Parquet holds no negative interval (a time zone's offset west of UTC): such columns as text, cast back
      const select = cols
        .map(([c, type]) => (type.includes('INTERVAL') ? `CAST(${id(c)} AS VARCHAR) AS ${id(c)}` : id(c)))
        .join(', ');
      await conn.run(
        `COPY (SELECT ${select} FROM ${id(name)}) TO ${str(temp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`,
      );
      files.written++;
    }
    if (before.get(name)?.months) changes.push({ remove: join(dir, name) });
    tables.push({ name, columns: cols, months: false, fingerprint });
  }
  // the pieces of tables the warehouse no longer has
  for (const gone of before.keys())
    if (!columns.has(gone)) {
      changes.push({ remove: join(dir, before.get(gone)!.months ? gone : `${gone}.parquet`) });
      files.removed++;
    }
  const views = (
    await conn.runAndReadAll(
      `SELECT sql FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' AND database_name = current_database() ORDER BY view_oid`,
    )
  ).getRowObjectsJson() as { sql: string }[];
  const manifest: Manifest = { format: 1, token, tables, views: views.map((v) => v.sql) };
  const target = join(dir, MANIFEST);
  const temp = tempPathFor(target);
  writeFileSync(temp, `${JSON.stringify(manifest)}\n`);
  changes.push({ temp, target }); // last: a manifest names pieces that are all in place
  return files;
}

/** `seed: 3 files written, 40 kept, 0 removed`. */
export const describeSeedFiles = (f: SeedFiles): string =>
  `${SEED_DIR}: ${f.written} files written, ${f.kept} kept, ${f.removed} removed`;

/**
 * The seed no longer describes the warehouse (another build was swapped in without one): its manifest is
 * removed, so no copy assembles it; the next build of a working copy writes it whole.
 */
export function dropSeed(output: Output): void {
  rmSync(join(output.seed, MANIFEST), { force: true });
}

/**
 * Makes `<out>/warehouse.duckdb` the seed's, when the output holds a seed and its warehouse is another (or
 * none): assembled from the pieces into a new file, renamed over the old. Returns what it did (undefined:
 * nothing to do).
 */
export async function ensureWarehouse(
  output: Output,
  memoryLimit: string = DEFAULTS.build.memoryLimit,
): Promise<{ tables: number; views: number; ms: number } | undefined> {
  const out = output.dir;
  const dir = output.seed;
  const manifest = readManifest(dir);
  if (!manifest) return undefined;
  const target = output.warehouse;
  if ((await seedTokenOf(target, memoryLimit)) === manifest.token) return undefined;
  const started = Date.now();
  removeStaleTemps(target);
  const temp = tempPathFor(target);
  const db = await openBuildDatabase(temp, memoryLimit);
  let done = false;
  try {
    await tuneForBuild(db.conn);
    await useOutputDir(db.conn, out); // pieces read by relative names: the folder's own name is never a glob
    for (const table of manifest.tables) {
      const pieces = table.months
        ? readdirSync(join(dir, table.name))
            .filter((n) => n.endsWith('.parquet'))
            .map((n) => `${SEED_DIR}/${table.name}/${n}`)
        : [`${SEED_DIR}/${table.name}.parquet`];
      const select = table.columns.map(([c, type]) => `CAST(${id(c)} AS ${type}) AS ${id(c)}`).join(', ');
      await db.conn.run(
        `CREATE TABLE ${id(table.name)} AS SELECT ${select} FROM read_parquet([${pieces.map(str).join(', ')}])`,
      );
    }
    await createViews(db.conn, manifest.views);
    await db.conn.run(`CREATE TABLE ${SEED_TABLE} AS SELECT ${str(manifest.token)} AS token`);
    await db.conn.run('CHECKPOINT');
    db.close();
    commit(temp, target);
    done = true;
    return { tables: manifest.tables.length, views: manifest.views.length, ms: Date.now() - started };
  } catch (err) {
    throw new Error(
      `the warehouse could not be assembled from ${dir} (${firstLine(err)}): run perks build --full to build it from the lake`,
      { cause: err },
    );
  } finally {
    db.close();
    if (!done) discard(temp);
  }
}

/** Views in the manifest's order, each failing one tried again once another was made (a view reading a later one). */
async function createViews(conn: DuckDBConnection, views: string[]): Promise<void> {
  let pending = views;
  while (pending.length) {
    const failed: { sql: string; err: unknown }[] = [];
    for (const sql of pending) await conn.run(sql).catch((err: unknown) => failed.push({ sql, err }));
    if (failed.length === pending.length) throw failed[0].err;
    pending = failed.map((f) => f.sql);
  }
}

/** The seed token the warehouse records; undefined when it has none or cannot be opened (assembled again). */
async function seedTokenOf(warehouse: string, memoryLimit: string): Promise<string | undefined> {
  if (!existsSync(warehouse)) return undefined;
  try {
    const instance = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY', memory_limit: memoryLimit });
    try {
      const conn = await instance.connect();
      try {
        const r = await conn.runAndReadAll(`SELECT token FROM ${SEED_TABLE}`);
        return (r.getRowObjectsJson() as { token: string }[])[0]?.token;
      } finally {
        conn.closeSync();
      }
    } finally {
      instance.closeSync();
    }
  } catch {
    return undefined;
  }
}

function readManifest(dir: string): Manifest | undefined {
  try {
    const parsed = Manifest.safeParse(JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // none, or unreadable: every piece written again
  }
}

/** Table → its columns and their types, in order. */
async function tableColumns(conn: DuckDBConnection): Promise<Map<string, [string, string][]>> {
  const rows = (
    await conn.runAndReadAll(
      `SELECT c.table_name AS t, c.column_name AS c, c.data_type AS type
       FROM duckdb_columns() c JOIN duckdb_tables() USING (database_name, schema_name, table_name)
       WHERE c.schema_name = 'main' AND c.database_name = current_database() ORDER BY c.table_name, c.column_index`,
    )
  ).getRowObjectsJson() as { t: string; c: string; type: string }[];
  const tables = new Map<string, [string, string][]>();
  for (const r of rows) {
    if (!tables.has(r.t)) tables.set(r.t, []);
    tables.get(r.t)!.push([r.c, r.type]);
  }
  return tables;
}

/** How many rows and a hash of them (order-free): equal when the table holds the same rows. */
async function fingerprintOf(conn: DuckDBConnection, table: string): Promise<string> {
  const r = await conn.runAndReadAll(
    `SELECT count(*)::VARCHAR || '/' || coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR AS f FROM ${id(table)} t`,
  );
  return (r.getRowObjectsJson() as { f: string }[])[0].f;
}
