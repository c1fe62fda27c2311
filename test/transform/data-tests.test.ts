/**
 * Header tests on some rows (DataTest.sqlOn): a model built by intervals checks only the group-months its build
 * replaced. Real DuckDB on a table with a clean month and a month that breaks every test: the whole-table query
 * and the query on the broken month find the same rows, the query on the clean month none; tests whose outcome
 * rows elsewhere can change (a relationship, uniqueness of a key without the group and month) have no such query.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { collectTests, runTest } from '../../src/transform/runner/data-tests.js';
import { parseHeader } from '../../src/transform/models/header.js';
import type { Node } from '../../src/transform/models/model-graph.js';

const HEADER = `-- grain: one row per organisation_group_id, month, user_id
-- key: organisation_group_id, month, user_id
-- incremental: month on organisation_group_id, month
-- tests:
--   unique: organisation_group_id, month, user_id
--   unique: user_id
--   not_null: user_id
--   accepted_values: kind in a, b
--   relationships: user_id -> users
select 1
`;

const model = (name: string, sql: string): Node => ({
  name,
  layer: 'marts',
  file: `sql/marts/${name}.sql`,
  sql,
  header: parseHeader(sql, `sql/marts/${name}.sql`),
  dependsOn: [],
});

let db: DuckDBInstance;
let conn: DuckDBConnection;

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run(`CREATE TABLE users AS SELECT * FROM (VALUES (1), (2)) AS u(user_id)`);
  // January is clean; February repeats a key, has a NULL user, an unknown kind and a user no one knows
  await conn.run(`CREATE TABLE m AS SELECT * FROM (VALUES
    (7, DATE '2026-01-01', 1, 'a'),
    (7, DATE '2026-01-01', 2, 'b'),
    (7, DATE '2026-02-01', 1, 'a'),
    (7, DATE '2026-02-01', 1, 'a'),
    (7, DATE '2026-02-01', NULL, 'c'),
    (7, DATE '2026-02-01', 3, NULL)
  ) AS t(organisation_group_id, month, user_id, kind)`);
});
afterAll(() => {
  conn.closeSync();
  db.closeSync();
});

test('a test of each row, or of a key holding the group and month, runs on the replaced months alone with the same outcome there', async () => {
  const tests = collectTests([model('m', HEADER)], []);
  const scoped = tests.filter((t) => t.sqlOn).map((t) => t.name);
  expect(scoped).toEqual([
    'm · unique(organisation_group_id, month, user_id)',
    'm · not_null(user_id)',
    'm · accepted_values(kind)',
  ]);
  const january = `t.month >= DATE '2026-01-01' AND t.month < DATE '2026-02-01'`;
  const february = `t.month >= DATE '2026-02-01' AND t.month < DATE '2026-03-01'`;
  for (const t of tests.filter((t) => t.sqlOn)) {
    const whole = await runTest(conn, t.sql);
    expect(whole.failures, t.name).toBe(1);
    expect(await runTest(conn, t.sqlOn!(february)), t.name).toEqual(whole);
    expect((await runTest(conn, t.sqlOn!(january))).failures, t.name).toBe(0);
    expect((await runTest(conn, t.sqlOn!('false'))).failures, t.name).toBe(0);
  }
});

test('a relationship, or uniqueness of a key a group-month does not hold, always reads the whole table', async () => {
  const tests = collectTests([model('m', HEADER)], []);
  const whole = tests.filter((t) => !t.sqlOn);
  expect(whole.map((t) => t.name)).toEqual(['m · unique(user_id)', 'm · relationships(user_id -> users)']);
  // their failures span months: user 1 is in January and February; user 3 is known to no one
  expect((await runTest(conn, whole[0].sql)).examples).toEqual([{ user_id: 1, duplicates: '3' }]);
  expect((await runTest(conn, whole[1].sql)).examples).toEqual([{ user_id: 3, rows: '1' }]);
});

test('a model that declares no intervals: uniqueness of any key reads the whole table', () => {
  const plain = HEADER.replace(/^-- incremental:.*\n/m, '');
  const unique = collectTests([model('m', plain)], []).filter((t) => t.name.startsWith('m · unique('));
  expect(unique.map((t) => [t.name, t.sqlOn])).toEqual([
    ['m · unique(organisation_group_id, month, user_id)', undefined],
    ['m · unique(user_id)', undefined],
  ]);
});
