/** Shared by the transform tests: a read of a warehouse or Parquet file, and what a folder holds. */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { expect } from 'vitest';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { outputAt } from '../../src/output/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const AS_OF = '2026-04-01';

/** A row of the scalars these tests select, JSON-safe (BIGINT and DECIMAL as strings, dates as YYYY-MM-DD). */
export type Row = Record<string, string | number | boolean | null>;

/** Rows of a query, JSON-safe. */
export async function query(database: string, sql: string): Promise<Row[]> {
  const db = await DuckDBInstance.create(database, database === ':memory:' ? {} : { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    // the lake views read paths relative to the output directory, as every reader of the warehouse does (docs/analysts.md)
    if (database !== ':memory:') await conn.run('SET file_search_path = $dir', { dir: dirname(database) });
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Row[];
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** File names directly in `dir`. */
export const namesIn = (dir: string): string[] => readdirSync(dir).sort();

/** Leftovers of an unfinished write: temporary files, DuckDB WAL or spill folders. */
export const temporaries = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tmp-|\.wal$|\.spill/.test(f));

/**
 * A private copy of the project's models (`<tmp>/sql`) for a test to add to or break, and its removal.
 */
export function copyOfProject(): { sqlDir: string; remove: () => void } {
  const sqlDir = join(mkdtempSync(join(tmpdir(), 'perks-sql-')), 'sql');
  cpSync(join(ROOT, 'sql'), sqlDir, { recursive: true });
  return { sqlDir, remove: () => rmSync(dirname(sqlDir), { recursive: true, force: true }) };
}

/** A build of `outDir` with --verify-incremental: it must succeed, equal to a full build of the same lake. */
export async function verifiedBuild(outDir: string, asOf = AS_OF): Promise<BuildResult> {
  const b = await buildWarehouse({ output: outputAt(outDir), asOf, verifyIncremental: true });
  expect(b.error).toBeUndefined();
  expect(b.steps.find((s) => s.name === 'verify incremental')?.status).toBe('success');
  return b;
}
