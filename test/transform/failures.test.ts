/**
 * A broken model, a cycle, a missing reference and a failing data test each stop the build with one
 * clear line naming the files, and leave the previous warehouse and marts exactly as they were.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { buildWarehouse, ModelGraphError } from '../../src/transform/index.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query, ROOT, temporaries } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
let sqlDir: string;
let before: { warehouse: string; marts: string };

/** What a reader of the outputs sees: the warehouse's revenue and the bytes of a mart file. */
const snapshot = async () => ({
  warehouse:
    JSON.stringify(await query(join(outDir, 'warehouse.duckdb'), 'SELECT * FROM revenue_monthly ORDER BY ALL')) +
    statSync(join(outDir, 'warehouse.duckdb')).mtimeMs,
  marts: readFileSync(join(outDir, 'marts', 'revenue_monthly.parquet')).toString('base64'),
});

beforeAll(async () => {
  outDir = await writeFixtureLake();
  const first = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  expect(first.ok).toBe(true);
  before = await snapshot();
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

beforeEach(() => {
  // a private copy of the project's models for each test to break
  sqlDir = join(mkdtempSync(join(tmpdir(), 'perks-sql-')), 'sql');
  cpSync(join(ROOT, 'sql'), sqlDir, { recursive: true });
  return () => rmSync(join(sqlDir, '..'), { recursive: true, force: true });
});

const add = (path: string, sql: string) => writeFileSync(join(sqlDir, path), sql);

async function expectPreviousOutputsKept() {
  expect(await snapshot()).toEqual(before);
  expect(temporaries(outDir)).toEqual([]);
}

test('a broken model fails the build naming the model and its file; later models are skipped; the previous warehouse stays', async () => {
  add('marts/broken_mart.sql', '-- grain: nothing\nselect no_such_column from stg_orders\n');
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(result.ok).toBe(false);
  expect(result.error).toMatch(
    /^model broken_mart \(sql\/marts\/broken_mart\.sql\) failed: Binder Error: .*no_such_column/,
  );
  expect(result.error).not.toContain('\n');
  const broken = result.steps.findIndex((s) => s.name === 'broken_mart');
  expect(result.steps[broken].status).toBe('error');
  const after = result.steps.slice(broken + 1);
  expect(after.length).toBeGreaterThan(0);
  expect(after.every((s) => s.status === 'skipped')).toBe(true);
  expect(result.marts).toEqual([]);
  await expectPreviousOutputsKept();
});

test('a cycle is one line naming every model of the loop and its file', async () => {
  add('intermediate/int_a.sql', 'select * from int_b\n');
  add('intermediate/int_b.sql', 'with x as (select * from int_a) select * from x\n');
  const attempt = buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  await expect(attempt).rejects.toThrow(ModelGraphError);
  await expect(attempt).rejects.toThrow(
    'cycle between models: int_a (sql/intermediate/int_a.sql) -> int_b (sql/intermediate/int_b.sql) -> int_a (sql/intermediate/int_a.sql)',
  );
  await expectPreviousOutputsKept();
});

test('a reference to a missing model names the file and the name', async () => {
  add('marts/orphan.sql', 'select * from stg_orders join int_nowhere using (order_id)\n');
  await expect(buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF })).rejects.toThrow(
    'sql/marts/orphan.sql references "int_nowhere", which is neither a model (sql/<layer>/int_nowhere.sql) nor a lake view (lake_<stream>)',
  );
  await expectPreviousOutputsKept();
});

test('a failing data test fails the build with the model, the test and a few offending rows', async () => {
  // revenue_monthly declares a key it does not have: one row per group only
  const path = join(sqlDir, 'marts', 'revenue_monthly.sql');
  writeFileSync(
    path,
    readFileSync(path, 'utf8').replace('-- tests:\n', '-- tests:\n--   unique: organisation_group_id\n'),
  );
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(result.ok).toBe(false);
  expect(result.error).toBe(
    'data test failed: revenue_monthly · unique(organisation_group_id): 2 offending rows, e.g. {"organisation_group_id":"11","duplicates":"4"}; {"organisation_group_id":"12","duplicates":"3"}',
  );
  await expectPreviousOutputsKept();
});

test('a failing singular test (sql/tests) names its file', async () => {
  add(
    '../sql/tests/no_refunds.sql',
    "-- model: revenue_monthly\nselect organisation_group_id, month from revenue_monthly where order_status = 'Refunded'\n",
  );
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(result.error).toBe(
    'data test failed: revenue_monthly · no_refunds (sql/tests/no_refunds.sql): 1 offending row, e.g. {"organisation_group_id":"11","month":"2026-02-01"}',
  );
  await expectPreviousOutputsKept();
});

test('a singular test of warn severity that finds rows is reported, and the build goes on and swaps', async () => {
  add(
    '../sql/tests/no_refunds.sql',
    "-- model: revenue_monthly\n-- severity: warn\nselect organisation_group_id, month from revenue_monthly where order_status = 'Refunded'\n",
  );
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(result.ok).toBe(true);
  expect(result.error).toBeUndefined();
  expect(result.warnings).toEqual([
    'data test warning: revenue_monthly · no_refunds (sql/tests/no_refunds.sql): 1 offending row, e.g. {"organisation_group_id":"11","month":"2026-02-01"}',
  ]);
  expect(result.steps.find((s) => s.name.includes('no_refunds'))?.status).toBe('warn');
  expect(result.marts.length).toBeGreaterThan(0);
  before = await snapshot(); // swapped in: the outputs later tests must keep
});

test('a severity other than error or warn is one line naming the file', async () => {
  add('../sql/tests/odd.sql', '-- model: revenue_monthly\n-- severity: fatal\nselect 1 where false\n');
  await expect(buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF })).rejects.toThrow(
    'sql/tests/odd.sql: severity must be error or warn, not "fatal"',
  );
});

test('a model that is not one SELECT is refused before anything runs', async () => {
  add('staging/stg_bad.sql', 'create table oops as select 1;\n');
  await expect(buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF })).rejects.toThrow(
    'sql/staging/stg_bad.sql: a model is one SELECT query',
  );
  await expectPreviousOutputsKept();
});

test('an empty lake builds every model as an empty, typed table', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'perks-empty-'));
  try {
    const result = await buildWarehouse({ output: outputAt(empty), asOf: AS_OF });
    expect(result.error).toBeUndefined();
    const rows = await query(join(empty, 'warehouse.duckdb'), `SELECT count(*) AS n FROM revenue_monthly`);
    expect(rows).toEqual([{ n: '0' }]);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('leftovers of a killed build (its pid gone) are removed by the next build', async () => {
  const dead = 2 ** 22 + 12345; // above Linux's default pid_max: never a live process
  writeFileSync(join(outDir, `warehouse.duckdb.tmp-${dead}-0badc0de`), 'half a warehouse');
  writeFileSync(join(outDir, `warehouse.duckdb.tmp-${dead}-0badc0de.wal`), '');
  writeFileSync(join(outDir, 'marts', `revenue_monthly.parquet.tmp-${dead}-0badc0de`), 'half a mart');
  const result = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  expect(result.ok).toBe(true);
  expect(temporaries(outDir)).toEqual([]);
  before = await snapshot(); // the outputs later tests must keep
});

test('a data test the header cannot read is one line naming the file and the expected form', async () => {
  const path = join(sqlDir, 'marts', 'revenue_monthly.sql');
  writeFileSync(
    path,
    readFileSync(path, 'utf8').replace('-- tests:\n', '-- tests:\n--   unqiue: organisation_group_id\n'),
  );
  await expect(buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF })).rejects.toThrow(
    'sql/marts/revenue_monthly.sql: test "unqiue: organisation_group_id" is not understood; expected unique, not_null, accepted_values or relationships',
  );
  expect(temporaries(outDir)).toEqual([]);
});

test('a lake file that is not Parquet is one line naming the stream, and the previous warehouse stays', async () => {
  const broken = await writeFixtureLake();
  try {
    expect((await buildWarehouse({ output: outputAt(broken), asOf: AS_OF })).ok).toBe(true);
    const warehouse = readFileSync(join(broken, 'warehouse.duckdb'));
    writeFileSync(
      join(broken, 'lake', 'credit', 'organisation_group_id=11', '_snapshot_date=2026-03-31', 'part-9.parquet'),
      'not parquet',
    );
    await expect(buildWarehouse({ output: outputAt(broken), asOf: AS_OF })).rejects.toThrow(
      /^the lake stream credit \(.*\/lake\/credit\) cannot be read: /,
    );
    expect(readFileSync(join(broken, 'warehouse.duckdb')).equals(warehouse)).toBe(true);
    expect(temporaries(broken)).toEqual([]);
  } finally {
    rmSync(broken, { recursive: true, force: true });
  }
});

test('revenue that does not add up to the staged orders fails the reconciliation, per group and currency', async () => {
  // a mart that silently drops refunded orders
  const path = join(sqlDir, 'marts', 'revenue_monthly.sql');
  writeFileSync(
    path,
    readFileSync(path, 'utf8').replace('from stg_orders', "from stg_orders where order_status <> 'Refunded'"),
  );
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(result.error).toBe(
    'data test failed: revenue_monthly · revenue_reconciles_with_orders (sql/tests/revenue_reconciles_with_orders.sql): 1 offending row, e.g. ' +
      '{"organisation_group_id":"11","order_currency":"GBP","mart_orders":"3","staged_orders":"4","mart_face_value":"60.00","staged_face_value":"75.00","mart_group_revenue":"1.80","staged_group_revenue":"2.25"}',
  );
  await expectPreviousOutputsKept();
});

test('a latest: line naming a lake view without snapshots names the file and the views it may name', async () => {
  add('marts/latest_orders.sql', '-- latest: lake_orders\nselect count(*) AS n from lake_orders\n');
  await expect(buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF })).rejects.toThrow(
    'sql/marts/latest_orders.sql: latest: lake_orders is not a lake view of listings by snapshot; expected one of lake_groups, lake_users, lake_offers',
  );
  await expectPreviousOutputsKept();
});
