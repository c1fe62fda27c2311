/**
 * The four marts on the hand-written lake of fixture-lake.ts, as of 2026-04-01, every expected value
 * worked out from its rows.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query, temporaries } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
let result: BuildResult;
let warehouse: string;
const q = (sql: string) => query(warehouse, sql);

beforeAll(async () => {
  outDir = await writeFixtureLake();
  result = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  warehouse = join(outDir, 'warehouse.duckdb');
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

test('the build succeeds, runs every data test, exports the marts and dimensions and leaves no temporary file', () => {
  expect(result.error).toBeUndefined();
  expect(result.ok).toBe(true);
  expect(result.steps.every((s) => s.status === 'success')).toBe(true);
  expect(result.steps.filter((s) => s.kind === 'test').length).toBeGreaterThan(20);
  expect(result.steps.some((s) => s.name.includes('revenue_reconciles_with_orders'))).toBe(true);
  expect(result.marts.map((m) => m.slice(outDir.length + 1)).sort()).toEqual(
    [
      'credit_adjustments',
      'credit_liability_monthly',
      'dim_groups',
      'dim_offers',
      'engagement_monthly',
      'engagement_users',
      'reconciliation_platform',
      'revenue_adjustments',
      'revenue_monthly',
      'revenue_offers_monthly',
      'savings_monthly',
    ].map((m) => `marts/${m}.parquet`),
  );
  expect(temporaries(outDir)).toEqual([]);
});

describe('revenue_monthly', () => {
  test('sums each money column exactly as DECIMAL, per group, local month, currency and status', async () => {
    const rows =
      await q(`SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS month, order_currency AS ccy, order_status AS status,
      orders, face_value, order_total_paid, order_credit, order_saving, group_revenue FROM revenue_monthly ORDER BY ALL`);
    const r = (g: number, month: string, ccy: string, status: string, orders: number, money: string[]) => ({
      g: String(g),
      month,
      ccy,
      status,
      orders: String(orders),
      face_value: money[0],
      order_total_paid: money[1],
      order_credit: money[2],
      order_saving: money[3],
      group_revenue: money[4],
    });
    expect(rows).toEqual([
      r(11, '2026-02', 'GBP', 'Refunded', 1, ['15.00', '15.00', '0.00', '0.00', '0.45']),
      r(11, '2026-03', 'EUR', 'Complete', 1, ['50.00', '45.00', '5.00', '5.00', '1.50']),
      // 101 (its later extraction, not the 99.99 one) + 104 (the anonymised user's order, still counted)
      r(11, '2026-03', 'GBP', 'Complete', 2, ['40.00', '36.00', '1.00', '4.00', '1.20']),
      r(11, '2026-04', 'GBP', 'Complete', 1, ['20.00', '18.00', '0.00', '2.00', '0.60']),
      r(12, '2025-10', 'USD', 'Complete', 1, ['11.00', '10.00', '0.00', '1.00', '0.33']),
      r(12, '2025-11', 'USD', 'Complete', 1, ['12.00', '11.00', '0.00', '1.00', '0.36']),
      r(12, '2026-03', 'USD', 'Complete', 2, ['50.00', '45.00', '1.00', '5.00', '1.50']),
    ]);
    const types = await q(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'revenue_monthly' AND column_name IN ('face_value', 'group_revenue', 'month')`,
    );
    expect(types.map((t) => t.data_type)).toEqual(['DATE', 'DECIMAL(38,2)', 'DECIMAL(38,2)']);
  });

  test('per-user money is DECIMAL(18,2), as docs/analysts.md says: no per-user mart carries a 128-bit sum', async () => {
    const wide = await q(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_name IN ('reconciliation_platform', 'savings_monthly', 'engagement_users')
         AND data_type LIKE 'DECIMAL%' AND data_type <> 'DECIMAL(18,2)' ORDER BY ALL`,
    );
    expect(wide).toEqual([]);
    const money = await q(
      `SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'reconciliation_platform' AND data_type = 'DECIMAL(18,2)'`,
    );
    expect(money).toEqual([{ n: '9' }]);
  });

  test('an order on the last local day of a month counts in that month, on both sides of a DST change', async () => {
    // order_date is the group's local day: 31 Mar in London (BST) and New York (EDT), 31 Oct (EDT) and
    // 30 Nov (EST) in New York, 28 Feb in London (GMT).
    const rows = await q(`SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS month, sum(orders) AS orders
      FROM revenue_monthly GROUP BY ALL ORDER BY ALL`);
    expect(rows).toEqual([
      { g: '11', month: '2026-02', orders: '1' },
      { g: '11', month: '2026-03', orders: '3' },
      { g: '11', month: '2026-04', orders: '1' },
      { g: '12', month: '2025-10', orders: '1' },
      { g: '12', month: '2025-11', orders: '1' },
      { g: '12', month: '2026-03', orders: '2' },
    ]);
  });

  test('two currencies of one group and month stay apart', async () => {
    const rows = await q(`SELECT order_currency, sum(face_value) AS face_value FROM revenue_monthly
      WHERE organisation_group_id = 11 AND month = DATE '2026-03-01' GROUP BY ALL ORDER BY ALL`);
    expect(rows).toEqual([
      { order_currency: 'EUR', face_value: '50.00' },
      { order_currency: 'GBP', face_value: '40.00' },
    ]);
  });
});

test("savings_monthly: per user, month and currency, the anonymised user's order unattributed, egift figures from redemption stats", async () => {
  const rows =
    await q(`SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS month, user_id, user_uid, order_currency AS ccy,
    orders, order_saving, face_value, credit_spent, redemptions, egift_savings, egift_face_value
    FROM savings_monthly ORDER BY g, month, user_id NULLS LAST, ccy`);
  const r = (
    g: number,
    month: string,
    user: number | null,
    ccy: string | null,
    orders: number,
    money: [string, string, string],
    redemptions = 0,
    egift: [string, string] = ['0.00', '0.00'],
  ) => ({
    g: String(g),
    month,
    user_id: user === null ? null : String(user),
    user_uid: user === null || user === 3 ? null : `uid-${user}`,
    ccy,
    orders: String(orders),
    order_saving: money[0],
    face_value: money[1],
    credit_spent: money[2],
    redemptions: String(redemptions),
    egift_savings: egift[0],
    egift_face_value: egift[1],
  });
  expect(rows).toEqual([
    r(11, '2026-02', 2, 'GBP', 1, ['0.00', '15.00', '0.00']),
    r(11, '2026-03', 1, 'GBP', 1, ['1.00', '10.00', '1.00'], 2, ['2.50', '25.00']),
    r(11, '2026-03', 2, 'EUR', 1, ['5.00', '50.00', '5.00']),
    // the anonymised user: her redemption stats by id (no currency, no UID any more)...
    r(11, '2026-03', 3, null, 0, ['0.00', '0.00', '0.00'], 1, ['1.00', '10.00']),
    // ...and her order, which no current email matches: unattributed
    r(11, '2026-03', null, 'GBP', 1, ['3.00', '30.00', '0.00']),
    r(11, '2026-04', 1, 'GBP', 1, ['2.00', '20.00', '0.00']),
    r(12, '2025-10', 21, 'USD', 1, ['1.00', '11.00', '0.00']),
    r(12, '2025-11', 21, 'USD', 1, ['1.00', '12.00', '0.00']),
    r(12, '2026-03', 21, 'USD', 2, ['5.00', '50.00', '1.00']),
  ]);
});

test('engagement_users: one row per current user, windows relative to as-of, local days, and the documented segments', async () => {
  const rows =
    await q(`SELECT organisation_group_id AS g, user_id, segment, days_since_last_login, login_count, orders_total, orders_30d, orders_90d,
    savings_currency, savings_30d, savings_90d, redemptions, credit_available, credit_spent, credit_expired, interactions
    FROM engagement_users ORDER BY g, user_id`);
  const byUser = Object.fromEntries(rows.map((r) => [r.user_id as string, r]));
  expect(Object.keys(byUser).sort((a, b) => Number(a) - Number(b))).toEqual([
    '1',
    '2',
    '3',
    '4',
    '5',
    '6',
    '7',
    '8',
    '21',
    '31',
    '32',
    '33',
  ]);
  expect(Object.fromEntries(rows.map((r) => [r.user_id, r.segment]))).toEqual({
    1: 'active',
    2: 'active',
    3: 'churned',
    4: 'never_active',
    5: 'new',
    6: 'active',
    7: 'never_active',
    8: 'dormant',
    21: 'active',
    31: 'new',
    32: 'never_active',
    33: 'never_active',
  });
  expect(byUser[1]).toMatchObject({
    login_count: '7',
    days_since_last_login: '12',
    orders_total: '2',
    orders_30d: '2',
    orders_90d: '2',
    savings_currency: 'GBP',
    savings_30d: '3.00',
    savings_90d: '3.00',
    redemptions: '2',
    credit_available: '5.00',
    credit_spent: '2.50',
    credit_expired: '1.00',
    interactions: '1',
  });
  // two currencies in the window: no sum across them
  expect(byUser[2]).toMatchObject({
    orders_30d: '1',
    orders_90d: '2',
    savings_currency: null,
    savings_30d: null,
    interactions: '2',
    days_since_last_login: '121',
  });
  expect(byUser[3]).toMatchObject({ orders_total: '0', redemptions: '1', interactions: '1' });
  // last login 03:30 UTC on 31 Mar is 30 Mar in New York: two local days before as-of
  expect(byUser[21]).toMatchObject({
    days_since_last_login: '2',
    orders_total: '4',
    orders_30d: '1',
    orders_90d: '2',
    savings_currency: 'USD',
    savings_30d: '4.00',
    savings_90d: '5.00',
  });
  // 23:30 UTC on 31 Mar is 1 Apr in London (BST)
  expect(byUser[6]).toMatchObject({ days_since_last_login: '0' });
});

test('segment thresholds are build options: a longer active window turns dormant users active', async () => {
  const other = await writeFixtureLake();
  try {
    const r = await buildWarehouse({ output: outputAt(other), asOf: AS_OF, segments: { activeDays: 60 } });
    expect(r.ok).toBe(true);
    const rows = await query(join(other, 'warehouse.duckdb'), `SELECT segment FROM engagement_users WHERE user_id = 8`);
    expect(rows).toEqual([{ segment: 'active' }]);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

test('engagement_users long after the last order: empty windows count zero and sum 0.00, all-time figures stay', async () => {
  const other = await writeFixtureLake();
  try {
    const r = await buildWarehouse({ output: outputAt(other), asOf: '2026-12-01' });
    expect(r.ok).toBe(true);
    const rows = await query(
      join(other, 'warehouse.duckdb'),
      `SELECT user_id, orders_total, last_order_date, orders_30d, orders_90d, savings_currency, savings_30d, savings_90d
       FROM engagement_users WHERE user_id IN (3, 21) ORDER BY user_id`,
    );
    const empty = {
      orders_30d: '0',
      orders_90d: '0',
      savings_currency: null,
      savings_30d: '0.00',
      savings_90d: '0.00',
    };
    expect(rows).toEqual([
      { user_id: '3', orders_total: '0', last_order_date: null, ...empty }, // no order ever
      { user_id: '21', orders_total: '4', last_order_date: '2026-03-31', ...empty }, // none in the last 90 days
    ]);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

describe('engagement_monthly', () => {
  const month = async (g: number, m: string) =>
    (
      await q(`SELECT users, new_users, active_users, redeeming_users, orders, savings_currency, order_saving, egift_savings
      FROM engagement_monthly WHERE organisation_group_id = ${g} AND month = DATE '${m}-01'`)
    )[0];

  test('counts users, new, active and redeeming users, orders and savings per group and local month', async () => {
    expect(await month(11, '2026-03')).toEqual({
      users: '8',
      new_users: '1',
      active_users: '2',
      redeeming_users: '2',
      orders: '3',
      savings_currency: null,
      order_saving: null,
      egift_savings: '3.50', // GBP and EUR: not summed
    });
    expect(await month(11, '2026-04')).toEqual({
      users: '8',
      new_users: '0',
      active_users: '2',
      redeeming_users: '0',
      orders: '1',
      savings_currency: 'GBP',
      order_saving: '2.00',
      egift_savings: '0.00',
    });
    // user 2's refunded order and user 8's last login
    expect(await month(11, '2026-02')).toMatchObject({
      users: '7',
      new_users: '1',
      active_users: '2',
      orders: '1',
      savings_currency: 'GBP',
      order_saving: '0.00',
    });
    expect(await month(12, '2026-03')).toMatchObject({
      users: '1',
      active_users: '1',
      orders: '2',
      savings_currency: 'USD',
      order_saving: '5.00',
    });
  });

  test('new users fall in the month of their local creation day, on both sides of a DST change', async () => {
    const newUsers = async (g: number) =>
      await q(
        `SELECT strftime(month, '%Y-%m') AS m, new_users, users FROM engagement_monthly WHERE organisation_group_id = ${g} AND new_users > 0 ORDER BY month`,
      );
    // Sydney: 13:30 UTC is the next day in AEDT, the same day in AEST
    expect(await newUsers(13)).toEqual([
      { m: '2025-09', new_users: '1', users: '1' },
      { m: '2025-11', new_users: '1', users: '2' },
      { m: '2026-04', new_users: '1', users: '3' },
    ]);
    // London: 23:30 UTC on 30 Sep is 1 Oct in BST; 23:30 UTC on 28 Feb is still 28 Feb in GMT
    expect((await newUsers(11)).filter((r) => String(r.m) >= '2025-09')).toEqual([
      { m: '2025-10', new_users: '1', users: '6' },
      { m: '2026-02', new_users: '1', users: '7' },
      { m: '2026-03', new_users: '1', users: '8' },
    ]);
    const months = await q(
      `SELECT count(*) AS n, strftime(min(month), '%Y-%m') AS first, strftime(max(month), '%Y-%m') AS last FROM engagement_monthly WHERE organisation_group_id = 13`,
    );
    expect(months).toEqual([{ n: '8', first: '2025-09', last: '2026-04' }]);
  });
});

test('staging keeps the latest extraction of a key, the latest users snapshot, and tolerates extra columns and empty streams', async () => {
  expect(await q(`SELECT order_id, face_value FROM stg_orders WHERE order_id = 101`)).toEqual([
    { order_id: '101', face_value: '10.00' },
  ]);
  expect(await q(`SELECT count(*) AS n FROM stg_users WHERE organisation_group_id = 11 AND user_id = 99`)).toEqual([
    { n: '0' },
  ]);
  expect(await q(`SELECT count(*) AS n FROM stg_interactions`)).toEqual([{ n: '4' }]);
  expect(await q(`SELECT promo_code FROM lake_orders WHERE order_id = 102`)).toEqual([{ promo_code: 'SPRING' }]);
  expect(await q(`SELECT count(*) AS n FROM stg_offers`)).toEqual([{ n: '0' }]);
  const ledger = await q(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'lake_writeback_ledger' AND column_name IN ('interaction_id', 'organisation_group_id')`,
  );
  expect(ledger).toEqual([
    { column_name: 'organisation_group_id', data_type: 'BIGINT' },
    { column_name: 'interaction_id', data_type: 'BIGINT' },
  ]);
});

test('an anonymised user leaves no personal data in any warehouse table or mart file, though the raw lake still holds it', async () => {
  const needles = ['carolyn', 'zyxwort'];
  const hits = (column: string) => needles.map((n) => `lower(CAST(${column} AS VARCHAR)) LIKE '%${n}%'`).join(' OR ');
  // the lake is raw: the old snapshot, the order, redemption stats and an interaction still hold it
  expect(await q(`SELECT count(*) AS n FROM lake_users WHERE ${hits('email')}`)).toEqual([{ n: '1' }]);
  expect(await q(`SELECT count(*) AS n FROM lake_orders WHERE ${hits('last_name')}`)).toEqual([{ n: '1' }]);

  // every column of every row at once: the row cast to text (t is the row as a struct)
  const tables = await q(`SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY 1`);
  expect(tables.length).toBeGreaterThan(10);
  const perTable = tables.map(
    ({ table_name }) => `SELECT '${table_name}' AS source, count(*) AS n FROM "${table_name}" AS t WHERE ${hits('t')}`,
  );
  const perMart = result.marts.map(
    (m) => `SELECT '${m}' AS source, count(*) AS n FROM read_parquet('${m}') AS t WHERE ${hits('t')}`,
  );
  const counts = await q(perTable.concat(perMart).join(' UNION ALL '));
  expect(counts).toHaveLength(tables.length + result.marts.length);
  expect(counts.filter((c) => c.n !== '0')).toEqual([]);
  // and no email or name column in any table: orders carry the user_id their email matched, and the
  // emails that matched them (stg_user_emails, ephemeral) lived only during the build
  const emailColumns =
    await q(`SELECT table_name, column_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_name)
    WHERE t.table_type = 'BASE TABLE' AND (column_name ILIKE '%email%' OR column_name ILIKE '%name' AND column_name NOT IN ('group_name', 'display_name'))`);
  expect(emailColumns).toEqual([]);
  expect(await q(`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'stg_user_emails'`)).toEqual([
    { n: '0' },
  ]);
  expect(await q(`SELECT count(*) AS n FROM stg_orders WHERE user_id IS NOT NULL`)).not.toEqual([{ n: '0' }]);
});

test('the warehouse reads the lake by paths relative to the output directory and holds the data dictionary in <out>/docs/models.md', async () => {
  const [{ n }] = await q(`SELECT count(*) AS n FROM lake_orders`);
  expect(n).toBe('10');
  const definition = await q(`SELECT sql FROM duckdb_views() WHERE view_name = 'lake_orders'`);
  expect(String(definition[0].sql)).toContain("'lake/orders/**/*.parquet'");
  expect(String(definition[0].sql)).not.toContain(outDir);
  const { readFileSync } = await import('node:fs');
  const md = readFileSync(join(outDir, 'docs', 'models.md'), 'utf8');
  expect(md).toContain('## revenue_monthly');
  expect(md).toContain('- grain: one row per organisation_group_id, month, order_currency, order_status');
  expect(md).toContain('| group_revenue | DECIMAL(38,2) |');
});
