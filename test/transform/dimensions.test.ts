/**
 * Marts BI users can read: dim_groups and dim_offers exported next to the marts, and revenue by brand,
 * per group name and currency, answered from the exported Parquet files alone (no warehouse, no lake).
 * The fixture lake of fixture-lake.ts, plus an offers snapshot (perks 7 and 8) and two orders: one of perk
 * 8 and one of perk 9, which the snapshot no longer lists.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { lakeColumns, openPartitionWrite } from '../../src/lake/index.js';
import { OfferListItem } from '../../src/resources/index.js';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { LakeWriter, writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
let result: BuildResult;
const marts = (name: string) => `read_parquet('${join(outDir, 'marts', `${name}.parquet`)}')`;

const orderRow = (
  order_id: number,
  perk_id: number,
  brand: string,
  currency: string,
  money: [number, number, number, number, number],
) => ({
  order_id,
  order_status: 'Complete',
  first_name: 'Someone',
  last_name: 'Else',
  email: 'nobody@example.com',
  perk_id,
  brand,
  offer: 'x',
  offer_excerpt: 'x',
  face_value: money[0],
  order_total_paid: money[1],
  order_credit: money[2],
  order_currency: currency,
  order_saving: money[3],
  group_revenue: money[4],
});

beforeAll(async () => {
  outDir = await writeFixtureLake();
  const offers = await openPartitionWrite({
    outDir,
    stream: 'offers',
    partition: { _snapshot_date: '2026-03-31' },
    columns: lakeColumns(OfferListItem),
    runId: 'r-offers',
    extractedAt: new Date('2026-03-31T02:00:00Z'),
  });
  await offers.append([
    OfferListItem.parse({
      id: 7,
      brand: 'Brand A',
      brand_id: 200,
      title: '10% off Brand A eGift cards',
      offer: '10% off',
      discount: 10,
      perk_type_format: 'vouchers',
      start_date: '2025-01-01T00:00:00Z',
      end_date: '2027-01-01T00:00:00Z',
      redemption_in_store: true,
      redemption_online: true,
      collections: [
        { id: 1, name: 'Food' },
        { id: 2, name: 'Gifts' },
      ],
      type: { id: 300, perk_id: 7, voucher_code: '' },
    }),
    OfferListItem.parse({
      id: 8,
      brand: 'Brand B',
      brand_id: 201,
      title: '5% off Brand B online',
      offer: '5% off',
      discount: 5,
      perk_type_format: 'codes',
      start_date: '2025-06-01T00:00:00Z',
      end_date: '2026-12-31T00:00:00Z',
      redemption_in_store: false,
      redemption_online: true,
      collections: [],
      type: { id: 301, perk_id: 8, voucher_code: 'SAVE5' },
    }),
  ]);
  await offers.commit();
  const w = await LakeWriter.create(outDir);
  try {
    await w.file(
      'orders',
      { organisation_group_id: 12, order_date: '2026-03-20' },
      'part-0.parquet',
      '2026-03-31T02:00:00Z',
      [orderRow(205, 8, 'Brand B', 'USD', [30, 27, 0, 3, 0.9])],
    );
    await w.file(
      'orders',
      { organisation_group_id: 11, order_date: '2026-03-10' },
      'part-0.parquet',
      '2026-03-31T02:00:00Z',
      [orderRow(106, 9, 'Brand Gone', 'GBP', [5, 5, 0, 0, 0.15])],
    );
  } finally {
    w.close();
  }
  result = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
}, 300_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

test('the build exports dim_groups, dim_offers and revenue_offers_monthly next to the marts, and their data tests pass', () => {
  expect(result.error).toBeUndefined();
  expect(result.ok).toBe(true);
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
  expect(
    result.steps
      .filter((s) => s.kind === 'test' && /dim_|revenue_offers/.test(s.name))
      .every((s) => s.status === 'success'),
  ).toBe(true);
  expect(result.steps.some((s) => s.name.includes('revenue_offers_reconcile'))).toBe(true);
});

test('dim_groups: names, timezones, locales and currencies per group, from its Parquet file', async () => {
  // group_slug is the API's name (a slug); group_name, deprecated for one release, still holds the same
  const renamed = await query(
    ':memory:',
    `SELECT count(*) AS n FROM ${marts('dim_groups')} WHERE group_name IS DISTINCT FROM group_slug`,
  );
  expect(renamed).toEqual([{ n: '0' }]);
  const rows = await query(
    ':memory:',
    `SELECT organisation_group_id AS g, group_slug, display_name, timezone, primary_currency, currencies, orders
    FROM ${marts('dim_groups')} ORDER BY 1`,
  );
  expect(rows).toEqual([
    {
      g: '11',
      group_slug: 'group-11',
      display_name: 'Group 11',
      timezone: 'Europe/London',
      primary_currency: 'GBP',
      currencies: 'EUR, GBP',
      orders: '6',
    },
    {
      g: '12',
      group_slug: 'group-12',
      display_name: 'Group 12',
      timezone: 'America/New_York',
      primary_currency: 'USD',
      currencies: 'USD',
      orders: '5',
    },
    {
      g: '13',
      group_slug: 'group-13',
      display_name: 'Group 13',
      timezone: 'Australia/Sydney',
      primary_currency: null,
      currencies: null,
      orders: '0',
    },
  ]);
});

test('dim_offers: one row per perk with its brand; a perk only orders still name keeps the brand they give', async () => {
  const rows = await query(
    ':memory:',
    `SELECT perk_id, offer_id, brand_id, brand, title, discount, collections, is_listed, strftime(end_date, '%Y-%m-%d') AS ends
    FROM ${marts('dim_offers')} ORDER BY perk_id`,
  );
  expect(rows).toEqual([
    {
      perk_id: '7',
      offer_id: '7',
      brand_id: '200',
      brand: 'Brand A',
      title: '10% off Brand A eGift cards',
      discount: '10',
      collections: 'Food, Gifts',
      is_listed: true,
      ends: '2027-01-01',
    },
    {
      perk_id: '8',
      offer_id: '8',
      brand_id: '201',
      brand: 'Brand B',
      title: '5% off Brand B online',
      discount: '5',
      collections: '',
      is_listed: true,
      ends: '2026-12-31',
    },
    {
      perk_id: '9',
      offer_id: null,
      brand_id: null,
      brand: 'Brand Gone',
      title: null,
      discount: null,
      collections: null,
      is_listed: false,
      ends: null,
    },
  ]);
});

test('revenue by brand, per group name and currency, for March 2026, from the exported Parquet alone', async () => {
  const rows = await query(
    ':memory:',
    `
    SELECT g.display_name, g.timezone, r.order_currency AS currency, o.brand, sum(r.orders) AS orders, sum(r.group_revenue) AS group_revenue
    FROM ${marts('revenue_offers_monthly')} AS r
    JOIN ${marts('dim_offers')} AS o USING (perk_id)
    JOIN ${marts('dim_groups')} AS g USING (organisation_group_id)
    WHERE r.month = DATE '2026-03-01'
    GROUP BY ALL ORDER BY ALL`,
  );
  // worked out from the fixture: 101 and 104 (GBP), 103 (EUR), 106 (perk 9) in London; 201, 202 and 205 in New York
  expect(rows).toEqual([
    {
      display_name: 'Group 11',
      timezone: 'Europe/London',
      currency: 'EUR',
      brand: 'Brand A',
      orders: '1',
      group_revenue: '1.50',
    },
    {
      display_name: 'Group 11',
      timezone: 'Europe/London',
      currency: 'GBP',
      brand: 'Brand A',
      orders: '2',
      group_revenue: '1.20',
    },
    {
      display_name: 'Group 11',
      timezone: 'Europe/London',
      currency: 'GBP',
      brand: 'Brand Gone',
      orders: '1',
      group_revenue: '0.15',
    },
    {
      display_name: 'Group 12',
      timezone: 'America/New_York',
      currency: 'USD',
      brand: 'Brand A',
      orders: '2',
      group_revenue: '1.50',
    },
    {
      display_name: 'Group 12',
      timezone: 'America/New_York',
      currency: 'USD',
      brand: 'Brand B',
      orders: '1',
      group_revenue: '0.90',
    },
  ]);
  // every order of revenue_monthly is in exactly one brand's line
  const [totals] = await query(
    ':memory:',
    `SELECT
      (SELECT sum(orders) FROM ${marts('revenue_monthly')}) AS revenue_orders,
      (SELECT sum(r.orders) FROM ${marts('revenue_offers_monthly')} r JOIN ${marts('dim_offers')} o USING (perk_id)) AS brand_orders`,
  );
  expect(totals.brand_orders).toBe(totals.revenue_orders);
});
