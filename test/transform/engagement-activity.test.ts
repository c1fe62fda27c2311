/**
 * engagement_monthly's active users when a user has orders in two currencies in one month (two savings_monthly
 * rows) and also logged in that month: counted once. The mart counts distinct users without a hash table over
 * savings_monthly (the rows of a one-currency month are its users), so the month of several currencies is the
 * case to prove. The hand-written lake of fixture-lake.ts, one order added.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildWarehouse } from '../../src/transform/index.js';
import { LakeWriter, order, writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
const q = (sql: string) => query(join(outDir, 'warehouse.duckdb'), sql);

beforeAll(async () => {
  outDir = await writeFixtureLake();
  const lake = await LakeWriter.create(outDir);
  try {
    // alice (user 1, group 11, last login 20 March) already has a GBP order in March (101): now a EUR one too
    await lake.file(
      'orders',
      { organisation_group_id: 11, order_date: '2026-03-20' },
      'part-0.parquet',
      '2026-04-01T05:00:00Z',
      [order(106, 'alice@example.com', 'EUR', [12, 12, 0, 1, 0.36])],
    );
  } finally {
    lake.close();
  }
  const result = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  expect(result.error).toBeUndefined();
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

test('a user with orders in two currencies and a login in the month is one active user', async () => {
  // the case: two rows of alice's March in savings_monthly, in a month of GBP and EUR orders
  expect(
    await q(`SELECT order_currency AS ccy, orders FROM savings_monthly
             WHERE organisation_group_id = 11 AND month = DATE '2026-03-01' AND user_id = 1 ORDER BY ccy`),
  ).toEqual([
    { ccy: 'EUR', orders: '1' },
    { ccy: 'GBP', orders: '1' },
  ]);
  // alice and bob (his EUR order of 15 March); order 104's anonymised buyer is nobody's
  expect(
    await q(`SELECT active_users, orders, savings_currency FROM engagement_monthly
             WHERE organisation_group_id = 11 AND month = DATE '2026-03-01'`),
  ).toEqual([{ active_users: '2', orders: '4', savings_currency: null }]);
  // every month: the active users are the distinct users of the three sources, as a plain count(distinct) says
  const counted = await q(`
    WITH sources AS (
      SELECT organisation_group_id AS g, month AS m, user_id FROM savings_monthly WHERE user_id IS NOT NULL AND orders > 0
      UNION ALL
      SELECT organisation_group_id, date_trunc('month', last_login_local_date)::date, user_id FROM int_users
      WHERE last_login_local_date IS NOT NULL
    )
    SELECT e.organisation_group_id AS g, strftime(e.month, '%Y-%m') AS m, e.active_users, count(DISTINCT s.user_id) AS expected
    FROM engagement_monthly AS e LEFT JOIN sources AS s ON s.g = e.organisation_group_id AND s.m = e.month
    GROUP BY ALL HAVING e.active_users <> count(DISTINCT s.user_id) ORDER BY ALL`);
  expect(counted).toEqual([]);
});
