import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { allPages, harness, send, token, TODAY, type Body, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

const cents = (n: number) => Math.round(n * 100);
function truthFor(userId: number, from: string, to: string) {
  const orders = h.sb.world.ordersOf(h.groupId, { userId, from: `${from} 00:00:00`, to: `${to} 23:59:59` });
  const done = orders.filter((o) => o.status === 'Complete');
  const sum = (f: (o: (typeof done)[number]) => number) => done.reduce((s, o) => s + f(o), 0);
  return {
    all: orders.length,
    complete: done.length,
    face: sum((o) => o.face_value),
    cost: sum((o) => o.order_total_paid),
    credit: sum((o) => o.order_credit),
    savings: sum((o) => o.order_saving),
  };
}

describe('redemption statistics', () => {
  test('bulk stats by id agree with each user’s orders in the date range, paged in id order', async () => {
    const users = h.sb.world.users.inGroup(h.groupId).slice(0, 12);
    const body = {
      identifier: 'id',
      identifier_value: users.map((u) => String(u.id)).reverse(),
      start_date: '2026-01-01',
      end_date: '2026-06-30',
    };
    const { items, pages } = await allPages((b) => h.call('/v3/users/redemption-stats', b), body, 5);
    expect(pages).toHaveLength(3);
    expect(items.map((i) => i.id)).toEqual(users.map((u) => u.id));
    for (const item of items) {
      const t = truthFor(item.id, '2026-01-01', '2026-06-30');
      expect(item.all_redemptions_count).toBe(t.all);
      expect(item.egift_orders_count).toBe(t.complete);
      expect(cents(item.egift_face_value)).toBe(t.face);
      expect(cents(item.egift_cost)).toBe(t.cost);
      expect(cents(item.egift_savings)).toBe(t.savings);
    }
    expect(items.some((i) => i.all_redemptions_count > 0)).toBe(true);
  });

  test('by email, with active_only only users with redemptions come back; unknown values are left out', async () => {
    const users = h.sb.world.users
      .inGroup(h.groupId)
      .filter((u) => u.email)
      .slice(0, 20);
    const body = {
      identifier: 'email',
      identifier_value: [...users.map((u) => u.email!), 'ghost@example.com'],
      start_date: '2026-11-01',
      end_date: '2026-11-21',
      per_page: 100,
    };
    const all = await h.call('/v3/users/redemption-stats', body);
    expect(all.body.total).toBe(users.length);
    const active = await h.call('/v3/users/redemption-stats', { ...body, active_only: true });
    const expected = users
      .filter((u) => truthFor(u.id, '2026-11-01', '2026-11-21').all > 0)
      .map((u) => u.id)
      .sort((a, b) => a - b);
    expect(active.body.data.map((i: { id: number }) => i.id)).toEqual(expected);
    expect(expected.length).toBeLessThan(users.length);
  });

  test('more than 100 values, a bad date or an impossible date are 422 naming the field', async () => {
    const many = await h.call('/v3/users/redemption-stats', {
      identifier: 'id',
      identifier_value: Array.from({ length: 101 }, (_, i) => String(i)),
    });
    expect(many.body.errors).toHaveProperty('identifier_value');
    expect(
      (
        await h.call('/v3/users/redemption-stats', {
          identifier: 'id',
          identifier_value: ['1'],
          start_date: '01/02/2026',
        })
      ).body.errors,
    ).toHaveProperty('start_date');
    expect(
      (
        await h.call('/v3/users/redemption-stats', {
          identifier: 'id',
          identifier_value: ['1'],
          end_date: '2026-02-31',
        })
      ).body.errors,
    ).toHaveProperty('end_date');
  });

  test('single-user stats agree with the orders between two timestamps', async () => {
    const user = h.sb.world.users
      .inGroup(h.groupId)
      .find((u) => h.sb.world.ordersOf(h.groupId, { userId: u.id }).length > 5)!;
    const r = await h.call(`/v3/user/stats/id/${user.id}`, {
      redemption_created_from: '2025-12-01 00:00:00',
      redemption_created_to: '2026-11-21T23:59:59Z',
    });
    const t = truthFor(user.id, '2025-12-01', '2026-11-21');
    expect(Object.keys(r.body.data).sort()).toEqual([
      'all_redemptions_count',
      'egift_cost',
      'egift_face_value',
      'egift_savings',
      'order_credit',
    ]);
    expect(r.body.data.all_redemptions_count).toBe(t.all);
    expect(cents(r.body.data.egift_face_value)).toBe(t.face);
    expect(cents(r.body.data.order_credit)).toBe(t.credit);
  });
});

describe('user credit', () => {
  test('the balances agree with the items, which page across requests', async () => {
    const user = h.sb.world.users.inGroup(h.groupId).find((u) => h.sb.world.creditOf(u).credits.length >= 4)!;
    const { items, pages } = await allPages((b) => h.call(`/v3/user/credit/id/${user.id}`, b), {}, 3);
    const first = pages[0].body.data;
    expect(pages[0].body.total).toBe(items.length);
    for (const p of pages)
      expect({ available: p.body.data.available, spent: p.body.data.spent, expired: p.body.data.expired }).toEqual({
        available: first.available,
        spent: first.spent,
        expired: first.expired,
      });
    const sum = (f: (i: Body) => number) => cents(items.reduce((s, i) => s + f(i), 0));
    expect(cents(first.available)).toBe(sum((i) => (i.status === 'Available' ? i.remaining_amount : 0)));
    expect(cents(first.expired)).toBe(sum((i) => (i.status === 'Expired' ? i.remaining_amount : 0)));
    expect(cents(first.spent)).toBe(sum((i) => i.amount - i.remaining_amount));
    for (const i of items) {
      expect(Object.keys(i).sort()).toEqual(['amount', 'created_at', 'expires_at', 'remaining_amount', 'status']);
      expect(i.remaining_amount).toBeLessThanOrEqual(i.amount);
    }
  });

  test('the credit path can be configured', async () => {
    const sb = await startSandbox({ today: TODAY, creditPath: '/v3/credit/{identifier}/{identifier_value}' });
    try {
      const g = sb.credentials.group[0];
      const t = await token(sb, g.client_id, g.client_secret);
      const id = sb.world.users.inGroup(g.organisation_group_id)[0].id;
      expect((await send(sb.baseUrl, `/v3/credit/id/${id}`, { body: {}, token: t })).body.data).toHaveProperty(
        'available',
      );
      expect((await send(sb.baseUrl, `/v3/user/credit/id/${id}`, { body: {}, token: t })).status).toBe(404);
    } finally {
      await sb.close();
    }
  });
});

describe('interactions', () => {
  test('a user’s interactions page in time order and filter by interactions_from/to, inclusive', async () => {
    const user = h.sb.world.users.inGroup(h.groupId).find((u) => h.sb.world.interactionsOf(u).length >= 6)!;
    const truth = h.sb.world.interactionsOf(user);
    const { items } = await allPages((b) => h.call(`/v3/Interactions/list/id/${user.id}`, b), {}, 4);
    expect(items.map((i) => i.id)).toEqual(truth.map((i) => i.id));
    expect(typeof items[0].interaction_id).toBe('string');
    expect(items[0]).toMatchObject({
      organisation_group_id: h.groupId,
      user_id: user.id,
      organisation_id: expect.any(String),
    });
    const [a, b] = [items[1].interaction_at, items[4].interaction_at];
    const window = await h.call(`/v3/Interactions/list/id/${user.id}`, { interactions_from: a, interactions_to: b });
    expect(window.body.data.map((i: { id: number }) => i.id)).toEqual(items.slice(1, 5).map((i) => i.id));
  });

  test('create stores the interaction as sent, answers 200 with an empty data array, and does not deduplicate', async () => {
    const user = h.sb.world.users.inGroup(h.groupId).find((u) => u.status === 'Active')!;
    const body = {
      interaction_id: 424242,
      interaction_type: 'survey_response',
      interaction_at: '2026-11-21 10:00:00',
      interaction_details: { score: 9 },
    };
    for (let i = 0; i < 2; i++) {
      const r = await h.call(`/v3/Interactions/id/${user.id}`, body);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([]);
    }
    expect(h.sb.stats().interactionsStored[String(user.id)]).toBe(2);
    const listed = (
      await allPages(
        (b) => h.call(`/v3/Interactions/list/id/${user.id}`, b),
        { interactions_from: '2026-11-21 10:00:00' },
        100,
      )
    ).items;
    const mine = listed.filter((i) => i.interaction_id === '424242');
    expect(mine).toHaveLength(2);
    expect(mine[0]).toMatchObject({
      interaction_type_id: 5,
      interaction_details: { score: 9 },
      interaction_at: '2026-11-21T10:00:00.000000Z',
    });
    const bad = await h.call(`/v3/Interactions/id/${user.id}`, {
      interaction_id: 'x',
      interaction_type: '',
      interaction_at: 'soon',
    });
    expect(Object.keys(bad.body.errors).sort()).toEqual(['interaction_at', 'interaction_id', 'interaction_type']);
  });
});
