import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { allPages, harness, send, token, TODAY, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

const orderFields = [
  'brand',
  'email',
  'face_value',
  'first_name',
  'group_revenue',
  'last_name',
  'offer',
  'offer_excerpt',
  'order_credit',
  'order_currency',
  'order_id',
  'order_saving',
  'order_status',
  'order_total_paid',
  'perk_id',
];
const sql = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

describe('group orders', () => {
  test('every page of a date range together equals the truth, in order_id order, with no creation time', async () => {
    const range = { order_created_from: '2026-03-01 00:00:00', order_created_to: '2026-05-31 23:59:59' };
    const { items, pages } = await allPages((b) => h.call('/v3/orders', b), range, 37);
    const truth = h.sb.world.ordersOf(h.groupId, { from: range.order_created_from, to: range.order_created_to });
    expect(truth.length).toBeGreaterThan(100);
    expect(items.map((o) => o.order_id)).toEqual(truth.map((o) => o.order_id));
    expect(pages[0].body.total).toBe(truth.length);
    for (const o of items) expect(Object.keys(o).sort()).toEqual(orderFields);
  });

  test('both bounds are inclusive: an order at local midnight is in the day before and the day after when both windows touch it', async () => {
    const world = h.sb.world;
    const midnight = world.ordersOf(h.groupId).find((o) => {
      const local = new Date(o.created_at).toLocaleString('en-GB', { timeZone: 'Europe/London', hour12: false });
      return local.endsWith('00:00:00');
    })!;
    expect(midnight).toBeDefined();
    const before = await h.call('/v3/orders', {
      order_created_from: sql(midnight.created_at - 86_400_000),
      order_created_to: sql(midnight.created_at),
      per_page: 100,
    });
    const after = await h.call('/v3/orders', {
      order_created_from: sql(midnight.created_at),
      order_created_to: sql(midnight.created_at + 86_399_000),
      per_page: 100,
    });
    expect(before.body.data.at(-1).order_id).toBe(midnight.order_id);
    expect(after.body.data[0].order_id).toBe(midnight.order_id);
    const exact = await h.call('/v3/orders', {
      order_created_from: sql(midnight.created_at),
      order_created_to: sql(midnight.created_at),
    });
    expect(exact.body.data.map((o: { order_id: number }) => o.order_id)).toContain(midnight.order_id);
  });

  test('orders exist on both sides of the DST changes of every group with DST', () => {
    for (const [groupId, day] of [
      [11, '2026-03-29'],
      [11, '2026-10-25'],
      [12, '2026-03-08'],
      [12, '2026-11-01'],
      [13, '2026-04-05'],
      [13, '2026-10-04'],
    ] as const) {
      const from = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      const orders = h.sb.world.ordersOf(groupId, { from, to: from + 3 * 86_400_000 });
      expect(orders.length, `${groupId} ${day}`).toBeGreaterThan(2);
    }
  });

  test('money fields are consistent and statuses and currencies vary', async () => {
    const { items } = await allPages((b) => h.call('/v3/orders', b), {}, 100);
    expect(items.length).toBe(h.sb.world.ordersOf(h.groupId).length);
    for (const o of items) {
      expect(o.order_saving).toBeCloseTo(o.face_value - o.order_total_paid, 2);
      expect(o.order_total_paid + o.order_credit).toBeLessThanOrEqual(o.face_value);
      expect(o.group_revenue).toBeGreaterThan(0);
    }
    expect(new Set(items.map((o) => o.order_currency))).toEqual(new Set(['GBP', 'EUR']));
    expect(items.filter((o) => o.order_currency === 'EUR').length).toBeLessThan(items.length / 10);
    expect(new Set(items.map((o) => o.order_status))).toEqual(
      new Set(['Complete', 'Refunded', 'Cancelled', 'Pending']),
    );
    expect(items.some((o) => o.order_credit > 0)).toBe(true);
  });

  test('brand_id and brand_name filter the list (brand_name ignores case)', async () => {
    const offer = h.sb.world.offers[0];
    const byId = await allPages((b) => h.call('/v3/orders', b), { brand_id: offer.brand_id }, 100);
    const truth = h.sb.world
      .ordersOf(h.groupId)
      .filter((o) => h.sb.world.offers[o.offerIndex].brand_id === offer.brand_id);
    expect(truth.length).toBeGreaterThan(0);
    expect(byId.items.map((o) => o.order_id)).toEqual(truth.map((o) => o.order_id));
    const byName = await allPages((b) => h.call('/v3/orders', b), { brand_name: offer.brand.toUpperCase() }, 100);
    expect(byName.items.map((o) => o.order_id)).toEqual(truth.map((o) => o.order_id));
    expect((await h.call('/v3/orders', { brand_name: 'No Such Brand' })).body).toMatchObject({
      data: [],
      total: 0,
      from: null,
      to: null,
      last_page: 1,
      next_page_url: null,
    });
  });

  test('with the organisation token each group is listed by organisation_group_id', async () => {
    expect((await h.org('/v3/orders')).status).toBe(422);
    for (const g of h.sb.credentials.organisation.organisation_group_ids) {
      const r = await h.org('/v3/orders', { organisation_group_id: g, per_page: 1 });
      expect(r.body.total).toBe(h.sb.world.ordersOf(g).length);
    }
    const sydney = await h.org('/v3/orders', { organisation_group_id: 13, per_page: 100 });
    expect(new Set(sydney.body.data.map((o: { order_currency: string }) => o.order_currency))).toEqual(
      new Set(['AUD']),
    );
  });
});

describe('one user’s orders', () => {
  test('by email and by UID they equal the truth for that user', async () => {
    const user = h.sb.world.users
      .inGroup(h.groupId)
      .find((u) => u.status === 'Active' && u.UID && h.sb.world.ordersOf(h.groupId, { userId: u.id }).length > 3)!;
    const truth = h.sb.world.ordersOf(h.groupId, { userId: user.id }).map((o) => o.order_id);
    const byEmail = await allPages((b) => h.call(`/v3/orders/email/${encodeURIComponent(user.email!)}`, b), {}, 2);
    expect(byEmail.items.map((o) => o.order_id)).toEqual(truth);
    expect(byEmail.items.every((o) => o.email === user.email)).toBe(true);
    const byUid = await h.call(`/v3/orders/UID/${encodeURIComponent(user.UID!)}`, { per_page: 100 });
    expect(byUid.body.data.map((o: { order_id: number }) => o.order_id)).toEqual(truth);
    expect((await h.call('/v3/orders/email/nobody%40example.com')).status).toBe(404);
  });
});

test('bareListings leaves the pagination fields off the user list and the orders, but keeps paging', async () => {
  const sb = await startSandbox({ today: TODAY, bareListings: true });
  try {
    const g = sb.credentials.group[0];
    const t = await token(sb, g.client_id, g.client_secret);
    for (const path of ['/v3/orders', '/v3/user/list']) {
      const r = await send(sb.baseUrl, path, { body: { per_page: 5, page: 2 }, token: t });
      expect(Object.keys(r.body).sort()).toEqual(['data', 'status', 'timestamp']);
      expect(r.body.data).toHaveLength(5);
    }
    const orders = await send(sb.baseUrl, '/v3/orders', { body: { per_page: 5, page: 2 }, token: t });
    expect(orders.body.data[0].order_id).toBe(sb.world.ordersOf(g.organisation_group_id)[5].order_id);
    expect((await send(sb.baseUrl, '/v3/offers/list', { body: {}, token: t })).body).toHaveProperty('total');
  } finally {
    await sb.close();
  }
});
