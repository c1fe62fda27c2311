/**
 * Incremental builds give a full build's answer: a tiny sandbox over real HTTP, a sequence of days (new and
 * late orders, refunds, new users, a month closed and reopened, a model's SQL changed), extracted and built
 * incrementally each day with --verify-incremental, which builds the same lake whole in a scratch folder and
 * compares every table row for row. The clock is PERKS_NOW, moved with the sandbox's day.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { closeMonth, reopenMonth } from '../../src/close/index.js';
import {
  buildRecordPath,
  describeIntervals,
  buildWarehouse,
  readBuildRecord,
  type BuildResult,
} from '../../src/transform/index.js';
import { STATE_KEYS } from '../../src/transform/incremental/build-state.js';
import { camelKeys } from '../../src/shared/json-keys.js';
import { formatStep } from '../../src/commands/build.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { orgConfig, testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query, ROOT, temporaries } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
let sandbox: Sandbox;
let out: string;
const savedNow = process.env.PERKS_NOW;

beforeAll(async () => {
  sandbox = await testSandbox({ today: TODAY });
  out = tempOut('perks-incremental-');
});
afterAll(async () => {
  await sandbox.close();
  rmSync(out, { recursive: true, force: true });
  if (savedNow === undefined) delete process.env.PERKS_NOW;
  else process.env.PERKS_NOW = savedNow;
});

/** The sandbox's day: extract groups, users and orders at its noon, then build (and verify) as of that day. */
async function day(options: { sqlDir?: string; full?: boolean } = {}): Promise<BuildResult> {
  const today = sandbox.world.today;
  process.env.PERKS_NOW = `${today}T12:00:00Z`;
  const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-09-01' });
  const r = await extract(config, {
    output: outputAt(out),
    now: new Date(`${today}T12:00:00Z`),
    streams: ['groups', 'users', 'orders', 'redemption_stats'],
  });
  expect(r.status).toBe('success');
  const b = await buildWarehouse({ output: outputAt(out), asOf: today, verifyIncremental: true, ...options });
  expect(b.error).toBeUndefined();
  expect(b.ok).toBe(true);
  expect(b.steps.find((s) => s.name === 'verify incremental')?.status).toBe('success');
  expect(temporaries(out)).toEqual([]);
  await expectMonthFoldersWhole();
  return b;
}

/**
 * Each mart built by months: its month folder holds exactly the rows of its file (the build's default layout
 * writes both), one file per month, whatever months the build rewrote.
 */
async function expectMonthFoldersWhole(): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    for (const mart of ['savings_monthly', 'reconciliation_platform']) {
      const file = `read_parquet('${join(out, 'marts', `${mart}.parquet`)}')`;
      const folder = `read_parquet('${join(out, 'marts', mart, '*.parquet')}', filename = true)`;
      const r = await conn.runAndReadAll(
        `SELECT (SELECT count(*) FROM (SELECT * FROM ${file} EXCEPT ALL SELECT * EXCLUDE (filename) FROM ${folder})) AS only_file,
                (SELECT count(*) FROM (SELECT * EXCLUDE (filename) FROM ${folder} EXCEPT ALL SELECT * FROM ${file})) AS only_folder,
                (SELECT count(*) FROM ${folder} WHERE NOT ends_with(filename, strftime(month, '/%Y-%m.parquet'))) AS misplaced`,
      );
      expect({ mart, ...r.getRowObjectsJson()[0] }).toEqual({ mart, only_file: '0', only_folder: '0', misplaced: '0' });
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Every model's recorded build state (JSON) rewritten by `change`; returns the states as written, joined. */
async function rewriteBuildStates(change: (state: string) => string): Promise<string> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(outputAt(out).warehouse);
  const conn = await db.connect();
  try {
    const rows = (await conn.runAndReadAll(`SELECT model, state FROM _build_state`)).getRowObjectsJson() as {
      model: string;
      state: string;
    }[];
    const states = rows.map((r) => ({ model: r.model, state: change(r.state) }));
    for (const r of states) await conn.run(`UPDATE _build_state SET state = $state WHERE model = $model`, r);
    return states.map((r) => r.state).join('\n');
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

const monthFiles = (b: BuildResult, mart: string) => b.steps.find((s) => s.name === `marts/${mart}/`)!.monthFiles!;

const intervals = (b: BuildResult, model = 'stg_orders') => b.steps.find((s) => s.name === model)!.intervals!;

/** The group-months each header test of `model` checked (undefined: the whole table), by test. */
const tested = (b: BuildResult, model: string) =>
  Object.fromEntries(
    b.steps
      .filter((s) => s.kind === 'test' && s.name.startsWith(`${model} · `))
      .map((s) => [s.name, s.testedIntervals]),
  );

test('after each day of a sequence, the incremental build equals a full build, and rebuilds only the dirty months', async () => {
  const first = await day();
  expect(intervals(first).whole).toBe('no earlier build of it');
  expect(Object.values(tested(first, 'savings_monthly')).every((n) => n === undefined)).toBe(true);
  const months = intervals(first).rebuilt;
  expect(months).toBeGreaterThan(4); // September to November, per group
  // the months each model holds, counted apart; its inputs hold more (stg_month_states: every month since 2000)
  for (const [model, time] of [
    ['stg_orders', 'order_date'],
    ['savings_monthly', 'month'],
    ['reconciliation_platform', 'month'],
  ]) {
    const held = await query(
      join(out, 'warehouse.duckdb'),
      `SELECT count(DISTINCT date_trunc('month', ${time})) AS n FROM ${model}`,
    );
    expect(Number(held[0].n), model).toBeGreaterThan(1);
    expect(intervals(first, model).months, model).toBe(Number(held[0].n));
    expect(intervals(first, model).rebuilt, model).toBeGreaterThan(Number(held[0].n));
  }
  expect(describeIntervals('savings_monthly', intervals(first, 'savings_monthly'))).toBe(
    `savings_monthly: built whole, ${intervals(first, 'savings_monthly').months} months (no earlier build of it)`,
  );

  // the same lake again: nothing dirty
  const again = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, verifyIncremental: true });
  expect(again.ok).toBe(true);
  expect(intervals(again)).toMatchObject({ rebuilt: 0, skipped: months });
  expect(monthFiles(again, 'savings_monthly')).toMatchObject({ written: 0, removed: 0 });
  expect(monthFiles(again, 'savings_monthly').kept).toBeGreaterThanOrEqual(3);
  // a mart built from models by intervals: nothing upstream changed, nothing rebuilt
  expect(intervals(again, 'savings_monthly')).toMatchObject({ rebuilt: 0 });
  expect(intervals(again, 'savings_monthly').skipped).toBeGreaterThan(4);

  // the same warehouse and build record as the release before issue 43 wrote them (camelCase JSON): still read,
  // so the next build finds its state (nothing dirty, no month file written again) and the record its last success
  const record = await readBuildRecord(outputAt(out));
  expect(Object.keys(JSON.parse(readFileSync(buildRecordPath(outputAt(out)), 'utf8')))).toEqual([
    'last_attempt',
    'last_success',
  ]);
  expect(await rewriteBuildStates((state) => state)).toContain('"exported_file":');
  writeFileSync(buildRecordPath(outputAt(out)), JSON.stringify(record));
  expect(await readBuildRecord(outputAt(out))).toEqual(record);
  expect(await rewriteBuildStates((state) => JSON.stringify(camelKeys(JSON.parse(state), STATE_KEYS)))).toContain(
    '"exportedFile":',
  );
  const old = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today });
  expect(old.ok).toBe(true);
  expect(intervals(old)).toMatchObject({ rebuilt: 0, skipped: months });
  expect(intervals(old, 'savings_monthly')).toMatchObject({ rebuilt: 0 });
  expect(monthFiles(old, 'savings_monthly')).toMatchObject({ written: 0, removed: 0 });
  expect((await readBuildRecord(outputAt(out)))?.lastSuccess?.asOf).toBe(sandbox.world.today);

  // a day later: new orders, settled and refunded ones in the lookback, new users
  sandbox.advance(1);
  const next = await day();
  expect(intervals(next).whole).toBeUndefined();
  expect(intervals(next).skipped).toBeGreaterThan(0);
  for (const mart of ['savings_monthly', 'reconciliation_platform']) {
    expect(intervals(next, mart).whole).toBeUndefined();
    expect(intervals(next, mart).skipped).toBeGreaterThan(0);
    // its month folder: the months it rebuilt written (a month's file holds every group: here each of the three
    // months has a dirty group), none removed
    expect(monthFiles(next, mart).written).toBeGreaterThan(0);
    expect(monthFiles(next, mart).removed).toBe(0);
  }

  // the header tests of a model built by months checked the months it replaced, the kept ones passed them before
  const savingsMonths = intervals(next, 'savings_monthly').rebuilt;
  expect(tested(next, 'savings_monthly')).toEqual({
    // a singular test (sql/tests/) reads other marts too: whole
    'savings_monthly · savings_reconciles_with_revenue (sql/tests/savings_reconciles_with_revenue.sql)': undefined,
    'savings_monthly · unique(organisation_group_id, month, user_id, order_currency)': savingsMonths,
    'savings_monthly · not_null(organisation_group_id)': savingsMonths,
    'savings_monthly · not_null(month)': savingsMonths,
  });
  expect(Object.values(tested(next, 'stg_orders'))).toEqual(Array(3).fill(intervals(next).rebuilt));
  // `perks build` says so beside the test
  expect(formatStep(next.steps.find((s) => s.name === 'savings_monthly · not_null(month)')!)).toMatch(
    new RegExp(` {2}savings_monthly · not_null\\(month\\) \\(on the ${savingsMonths} group-months rebuilt\\)$`),
  );
  // a model built whole tests its whole table
  expect(Object.values(tested(next, 'engagement_users')).every((n) => n === undefined)).toBe(true);
  expect(Object.keys(tested(next, 'engagement_users')).length).toBeGreaterThan(3);

  // a refund of an October order, found by October's re-read at the close (the month reopened after)
  process.env.PERKS_NOW = `${sandbox.world.today}T12:00:00Z`;
  const group = sandbox.world.groups[0].id;
  await closeMonth({
    output: outputAt(out),
    month: '2026-10',
    group,
    by: 'test',
    force: true,
    rule: { statuses: ['Complete'] },
  });
  const store = sandbox.world.orders;
  for (let i = store.lowerBound(Date.parse('2026-10-10T00:00:00Z')); i < store.count; i++) {
    if (store.group[i] === 0 && store.statusOf(i) === 'Complete' && store.hidden[i] !== 1) {
      store.setStatus(i, 'Refunded');
      break;
    }
  }
  await reopenMonth({ output: outputAt(out), month: '2026-10', group, reason: 'a late refund' });
  sandbox.advance(7); // a week on: the deep re-read of the open and the previous month
  const deep = await day();
  expect(intervals(deep).rebuilt).toBeGreaterThanOrEqual(2);

  // a model's SQL changed: that model is rebuilt whole
  const sqlDir = join(mkdtempSync(join(tmpdir(), 'perks-sql-')), 'sql');
  cpSync(join(ROOT, 'sql'), sqlDir, { recursive: true });
  const file = join(sqlDir, 'staging', 'stg_orders.sql');
  writeFileSync(file, readFileSync(file, 'utf8').replace('orders.brand,', 'upper(orders.brand) as brand,'));
  sandbox.advance(1);
  const changed = await day({ sqlDir });
  expect(intervals(changed).whole).toBe('its SQL changed');
  // downstream, only the months whose rows changed (brand is not read by savings_monthly): none whole
  expect(intervals(changed, 'savings_monthly').whole).toBeUndefined();
  // and back: changed again
  const restored = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, verifyIncremental: true });
  expect(restored.ok).toBe(true);
  expect(intervals(restored).whole).toBe('its SQL changed');

  // --full rebuilds every month
  const full = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, full: true });
  expect(intervals(full)).toMatchObject({ whole: 'asked for (--full)' });
  rmSync(join(sqlDir, '..'), { recursive: true, force: true });
}, 300_000);

test('a warehouse whose kept months are wrong is caught by --verify-incremental: one line naming the table and a row, and the full build is swapped in', async () => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const warehouse = join(out, 'warehouse.duckdb');
  // a clean month's row changed behind the build's back: an incremental build keeps it (a column no data test
  // reconciles: the models downstream are kept too, nothing they read changed as far as the build knows)
  const db = await DuckDBInstance.create(warehouse);
  const conn = await db.connect();
  await conn.run(
    `UPDATE stg_orders SET brand = brand || ' (changed)' WHERE order_id = (SELECT min(order_id) FROM stg_orders WHERE order_date < DATE '2026-10-01')`,
  );
  conn.closeSync();
  db.closeSync();
  const b = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, verifyIncremental: true });
  expect(b.ok).toBe(false);
  expect(b.error).toMatch(
    /^the incremental build differs from a full build in \d+ tables: stg_orders: 1 rows only in the incremental build, 1 only in the full build; e\.g\. \{.*"order_id".*\}; the full build was swapped in$/,
  );
  expect(temporaries(out)).toEqual([]);
  // the full build's rows are what the warehouse holds now: the next incremental build verifies clean (and
  // removes the scratch folder a killed verification left)
  mkdirSync(join(out, '.verify-incremental-4194303-dead', 'marts'), { recursive: true });
  const after = await buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, verifyIncremental: true });
  expect(after.error).toBeUndefined();
  expect(intervals(after).rebuilt).toBe(0);
  expect(existsSync(join(out, '.verify-incremental-4194303-dead'))).toBe(false);
}, 180_000);

test('a group-month whose orders all disappear on the re-read is emptied on the incremental path too, as a full build empties it', async () => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const g = sandbox.world.groups[0].id;
  const month = async (): Promise<{ staged: number; orders: number; rows: number }> => {
    const db = await DuckDBInstance.create(join(out, 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    const r = await conn.runAndReadAll(
      `SELECT (SELECT count(*) FROM stg_orders WHERE organisation_group_id = ${g} AND order_date >= DATE '2026-12-01'),
              (SELECT coalesce(sum(orders), 0) FROM savings_monthly WHERE organisation_group_id = ${g} AND month = DATE '2026-12-01'),
              (SELECT count(*) FROM savings_monthly WHERE organisation_group_id = ${g} AND month = DATE '2026-12-01')`,
    );
    conn.closeSync();
    db.closeSync();
    const [staged, orders, rows] = r.getRows()[0].map(Number);
    return { staged, orders, rows };
  };
  sandbox.advance(1); // December's first whole day lands
  await day();
  const before = await month();
  expect(before.staged).toBeGreaterThan(0);
  expect(before.orders).toBe(before.staged);

  // every order of the group from November's last day on disappears from the platform: the lookback's re-read
  // lands December's days empty
  sandbox.advance(1);
  const store = sandbox.world.orders;
  let hidden = 0;
  for (let i = store.lowerBound(Date.parse('2026-11-30T00:00:00Z')); i < store.count; i++) {
    if (store.group[i] === 0 && store.hidden[i] !== 1) {
      store.setHidden(i, true);
      hidden++;
    }
  }
  expect(hidden).toBeGreaterThan(0);
  const emptied = await day(); // --verify-incremental: equal to a full build of the same lake
  for (const model of ['stg_orders', 'savings_monthly']) {
    expect(intervals(emptied, model).whole).toBeUndefined();
    expect(intervals(emptied, model).rebuilt).toBeGreaterThan(0);
  }
  const after = await month();
  expect(after).toMatchObject({ staged: 0, orders: 0 });
  // what stays of the group's December is at most its redemption statistics' row (no orders, no currency)
  expect(after.rows).toBeLessThanOrEqual(before.rows);
}, 300_000);

test('the month folders: a folder the warehouse does not describe is written whole; a layout keeps only its own form', async () => {
  const marts = join(out, 'marts');
  const build = (martLayout?: 'file' | 'months' | 'both') =>
    buildWarehouse({ output: outputAt(out), asOf: sandbox.world.today, ...(martLayout && { martLayout }) });
  // a build killed between the warehouse's swap and the folder's leaves the folder's token behind the state's
  writeFileSync(join(marts, 'savings_monthly', '_perks_build.json'), '{"token":"an older build"}\n');
  const rewritten = await build();
  expect(rewritten.ok).toBe(true);
  expect(monthFiles(rewritten, 'savings_monthly')).toMatchObject({ kept: 0, removed: 0 });
  expect(monthFiles(rewritten, 'savings_monthly').written).toBeGreaterThanOrEqual(4);
  // the other mart's folder is its warehouse's: nothing rebuilt, nothing written
  expect(monthFiles(rewritten, 'reconciliation_platform')).toMatchObject({ written: 0, removed: 0 });
  await expectMonthFoldersWhole();

  // months only: no single file left to go stale; the build names the folder's files for readers
  const months = await build('months');
  expect(months.marts).toContain(join(marts, 'savings_monthly', '*.parquet'));
  expect(existsSync(join(marts, 'savings_monthly.parquet'))).toBe(false);
  expect(existsSync(join(marts, 'dim_groups.parquet'))).toBe(true); // a mart not built by months: its file
  expect(monthFiles(months, 'savings_monthly').written).toBe(0);

  // one file only: the folder goes (it would no longer follow the warehouse)
  const file = await build('file');
  expect(file.steps.some((s) => s.name === 'marts/savings_monthly/')).toBe(false);
  expect(existsSync(join(marts, 'savings_monthly'))).toBe(false);
  expect(existsSync(join(marts, 'savings_monthly.parquet'))).toBe(true);

  // and back to both: the folder is written whole again
  const both = await build('both');
  expect(monthFiles(both, 'savings_monthly').kept).toBe(0);
  await expectMonthFoldersWhole();
  expect(temporaries(out)).toEqual([]);
}, 180_000);
