/**
 * A mart's month folder on real DuckDB and real files: only the months a build replaced are rewritten when the
 * folder is the one the warehouse describes (its token); a month gone is removed; rows of no month have a file.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { applyChange, type FileChange } from '../../src/transform/export/atomic-files.js';
import { stageMonthFolder, type MonthFolder } from '../../src/transform/export/export-months.js';
import { query } from './helpers.js';

let scratch: string;
let dir: string;
let db: DuckDBInstance;
let conn: DuckDBConnection;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'perks-months-'));
  dir = join(scratch, 'marts', 'm');
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run(`CREATE TABLE m AS SELECT * FROM (VALUES
      (1, DATE '2026-01-01', 10.00), (2, DATE '2026-01-01', 0.00), (1, DATE '2026-02-01', 5.50),
      (1, DATE '2026-03-01', NULL), (2, DATE '2026-03-01', 7.25)) t(g, month, amount)`);
});
afterAll(() => {
  conn.closeSync();
  db.closeSync();
  rmSync(scratch, { recursive: true, force: true });
});

/** Stages the folder and swaps it in, as a build does. */
async function stage(folder: Omit<MonthFolder, 'time'>) {
  const changes: FileChange[] = [];
  const files = await stageMonthFolder(conn, 'm', dir, { time: 'month', ...folder }, changes);
  for (const change of changes) applyChange(change);
  return files;
}

const monthFiles = () => readdirSync(dir).sort();
const rowsOf = (file: string) =>
  query(
    ':memory:',
    `SELECT g, CAST(month AS VARCHAR) AS month, CAST(amount AS VARCHAR) AS amount FROM read_parquet('${join(dir, file)}') ORDER BY g`,
  );

test('every month the first time, then only the replaced ones while the token matches; gone months removed', async () => {
  expect(await stage({ replaced: null, previousToken: undefined, token: 't1' })).toEqual({
    written: 3,
    kept: 0,
    removed: 0,
  });
  expect(monthFiles()).toEqual(['2026-01.parquet', '2026-02.parquet', '2026-03.parquet', '_perks_build.json']);
  const january = statSync(join(dir, '2026-01.parquet')).mtimeMs;

  // February changed; the warehouse's token is the folder's: February alone is rewritten
  await conn.run(`UPDATE m SET amount = 6.00 WHERE month = DATE '2026-02-01'`);
  expect(await stage({ replaced: new Set(['2026-02']), previousToken: 't1', token: 't2' })).toEqual({
    written: 1,
    kept: 2,
    removed: 0,
  });
  expect(statSync(join(dir, '2026-01.parquet')).mtimeMs).toBe(january);
  expect(await rowsOf('2026-02.parquet')).toEqual([{ g: 1, month: '2026-02-01', amount: '6.00' }]);
  // a NULL amount and a zero survive as they are
  expect(await rowsOf('2026-03.parquet')).toEqual([
    { g: 1, month: '2026-03-01', amount: null },
    { g: 2, month: '2026-03-01', amount: '7.25' },
  ]);
  expect((await rowsOf('2026-01.parquet'))[1]).toEqual({ g: 2, month: '2026-01-01', amount: '0.00' });

  // March emptied; a row of no month appears (a build that has one is built whole: every month is new)
  await conn.run(`DELETE FROM m WHERE month = DATE '2026-03-01'`);
  await conn.run(`INSERT INTO m VALUES (3, NULL, 1.00)`);
  expect(await stage({ replaced: null, previousToken: 't2', token: 't3' })).toEqual({
    written: 3,
    kept: 0,
    removed: 1,
  });
  expect(monthFiles()).toEqual(['2026-01.parquet', '2026-02.parquet', '_perks_build.json', 'no-month.parquet']);

  // a token the warehouse does not know (a build killed before the folder's swap): written whole
  expect(await stage({ replaced: new Set(), previousToken: 'another', token: 't4' })).toEqual({
    written: 3,
    kept: 0,
    removed: 0,
  });
  // an empty mart: every month file removed, one file of no rows keeps its columns readable
  await conn.run('DELETE FROM m');
  expect(await stage({ replaced: new Set(['2026-01', '2026-02']), previousToken: 't4', token: 't5' })).toEqual({
    written: 1,
    kept: 0,
    removed: 3,
  });
  expect(monthFiles()).toEqual(['_perks_build.json', 'no-rows.parquet']);
  expect(
    await query(
      ':memory:',
      `SELECT count(*) AS n, list(column_name ORDER BY column_name) AS c FROM (DESCRIBE SELECT * FROM read_parquet('${join(dir, '*.parquet')}'))`,
    ),
  ).toEqual([{ n: '3', c: ['amount', 'g', 'month'] }]);
});
