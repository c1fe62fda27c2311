/**
 * writeback_savings_milestones built by users (`incremental: user on …`, by-user.ts), on the hand-written lake
 * (real Parquet files, real DuckDB): a build computes again only the users whose savings_monthly rows changed, and
 * every user of a group whose currency changed. Each build with --verify-incremental: equal to a full build.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BuildResult } from '../../src/transform/index.js';
import { LakeWriter, order, writeFixtureLake } from './fixture-lake.js';
import { query as queryOf, verifiedBuild } from './helpers.js';

const MODEL = 'writeback_savings_milestones';
let out: string;
let lake: LakeWriter;

/** An order of group 11 by user `id` (user<id>@example.com) saving `saving`, in its own file of `day`. */
const placed = (day: string, id: number, currency: string, saving: number, orderId: number) =>
  lake.file(
    'orders',
    { organisation_group_id: 11, order_date: day },
    `part-${orderId}.parquet`,
    '2026-03-31T05:00:00Z',
    [order(orderId, `user${id}@example.com`, currency, [saving * 2, saving, 0, saving, 0.5])],
  );

beforeAll(async () => {
  out = await writeFixtureLake();
  lake = await LakeWriter.create(out);
  // user 4 saves 120 in February: 50 and 100 reached then
  await placed('2026-02-10', 4, 'GBP', 120, 401);
  const first = await build();
  expect(milestones(first).whole).toBe('no earlier build of it');
  expect(await thresholdsOf(4)).toEqual([50, 100]);
}, 240_000);
afterAll(() => {
  lake.close();
  rmSync(out, { recursive: true, force: true });
});

const build = () => verifiedBuild(out);

const milestones = (b: BuildResult) => b.steps.find((s) => s.name === MODEL)!.intervals!;

const query = (sql: string) => queryOf(join(out, 'warehouse.duckdb'), sql);

const rowsOf = (user: number) =>
  query(
    `SELECT (interaction_details->>'threshold')::INT AS threshold, interaction_details->>'currency' AS currency
     FROM ${MODEL} WHERE organisation_group_id = 11 AND identifier_value = '${user}' ORDER BY threshold`,
  );
const thresholdsOf = async (user: number) => (await rowsOf(user)).map((r) => r.threshold);

test("two users' new orders (one saving nothing): those two users alone are computed again", async () => {
  await placed('2026-02-12', 5, 'GBP', 55, 501);
  await placed('2026-02-12', 8, 'GBP', 0, 801);
  const b = await build();
  expect(milestones(b)).toMatchObject({ rebuilt: 2, unit: 'users' });
  expect(milestones(b).whole).toBeUndefined();
  expect(await thresholdsOf(5)).toEqual([50]);
  expect(await thresholdsOf(8)).toEqual([]);
  expect(await thresholdsOf(4)).toEqual([50, 100]);
  // nothing new: nothing computed again
  expect(milestones(await build())).toMatchObject({ rebuilt: 0 });
}, 240_000);

test('a user with no savings row any more loses the milestones a full build would not give her', async () => {
  rmSync(join(out, 'lake', 'orders', 'organisation_group_id=11', 'order_date=2026-02-12', 'part-501.parquet'));
  const b = await build();
  expect(milestones(b)).toMatchObject({ rebuilt: 1 });
  expect(await thresholdsOf(5)).toEqual([]);
}, 240_000);

test("e-gift savings alone (a row of no currency) count in the group's currency", async () => {
  await lake.file(
    'redemption_stats',
    { organisation_group_id: 11, window_start: '2026-01-01' },
    'part-7.parquet',
    '2026-03-31T05:00:00Z',
    [
      {
        id: 7,
        UID: 'uid-7',
        email: 'user7@example.com',
        all_redemptions_count: 1,
        egift_orders_count: 1,
        egift_face_value: 80,
        egift_cost: 10,
        egift_savings: 70,
        window_end: '2026-02-01',
      },
    ],
  );
  const b = await build();
  expect(milestones(b)).toMatchObject({ rebuilt: 1 });
  expect(await rowsOf(7)).toEqual([{ threshold: 50, currency: 'GBP' }]);
}, 240_000);

test("a group whose currency changes is computed again whole, the other groups' users not", async () => {
  // EUR rows now outnumber GBP ones in group 11 (three users, two months each, besides bob's EUR row)
  for (const [n, id] of [5, 6, 8].entries()) {
    await placed('2026-01-20', id, 'EUR', 5, 600 + n);
    await placed('2026-03-20', id, 'EUR', 5, 700 + n);
  }
  const b = await build();
  const [{ gbp, eur, users }] = await query(
    `SELECT count(*) FILTER (WHERE order_currency = 'GBP') AS gbp, count(*) FILTER (WHERE order_currency = 'EUR') AS eur,
            count(DISTINCT user_id) AS users
     FROM savings_monthly WHERE organisation_group_id = 11 AND user_id IS NOT NULL`,
  );
  expect(Number(eur)).toBeGreaterThan(Number(gbp));
  expect(milestones(b).whole).toBeUndefined();
  // every user of group 11 with savings (those holding milestones have savings), none of group 12
  expect(milestones(b).rebuilt).toBe(Number(users));
  // user 4's GBP savings no longer count; user 7's e-gift savings now count in EUR
  expect(await thresholdsOf(4)).toEqual([]);
  expect(await rowsOf(7)).toEqual([{ threshold: 50, currency: 'EUR' }]);
}, 240_000);
