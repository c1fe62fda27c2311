import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { harness, send, token, TODAY, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

describe('fault injection', () => {
  test('errorRate 1 answers every API call with 500, 502 or 503 and a JSON message; 0 restores service', async () => {
    h.sb.setFaults({ errorRate: 1 });
    const statuses = new Set<number>();
    for (let i = 0; i < 12; i++) {
      const r = await h.call('/v3/group');
      statuses.add(r.status);
      expect(typeof r.body.message).toBe('string');
    }
    h.sb.setFaults({ errorRate: 0 });
    expect([...statuses].every((s) => [500, 502, 503].includes(s))).toBe(true);
    expect(statuses.size).toBeGreaterThan(1);
    expect((await h.call('/v3/group')).status).toBe(200);
    expect(h.sb.stats().faults.errors).toBe(12);
  });

  test('latencyMs delays each answer', async () => {
    h.sb.setFaults({ latencyMs: 150 });
    const started = performance.now();
    await h.call('/v3/group');
    h.sb.setFaults({ latencyMs: 0 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  test('hangRate 1 never answers: the client times out, and the sandbox keeps serving', async () => {
    h.sb.setFaults({ hangRate: 1 });
    await expect(
      send(h.sb.baseUrl, '/v3/group', { body: {}, token: h.groupToken, signal: AbortSignal.timeout(300) }),
    ).rejects.toThrow();
    h.sb.setFaults({ hangRate: 0 });
    expect((await h.call('/v3/group')).status).toBe(200);
    expect(h.sb.stats().faults.hangs).toBe(1);
  });

  test('truncateRate 1 cuts the JSON body mid-way', async () => {
    h.sb.setFaults({ truncateRate: 1 });
    const r = await h.call('/v3/orders', { per_page: 10 });
    h.sb.setFaults({ truncateRate: 0 });
    expect(r.status).toBe(200);
    expect(r.body).toBeUndefined();
    expect(() => JSON.parse(r.text)).toThrow();
    expect(r.text.startsWith('{"status":200')).toBe(true);
  });

  test('faults given at start apply from the first call, and bad fault values are refused', async () => {
    const sb = await startSandbox({ today: TODAY, faults: { errorRate: 1 } });
    try {
      const g = sb.credentials.group[0];
      expect(
        (await send(sb.baseUrl, '/v3/group', { body: {}, token: await token(sb, g.client_id, g.client_secret) }))
          .status,
      ).toBeGreaterThanOrEqual(500);
      expect(() => sb.setFaults({ errorRate: 2 })).toThrow();
    } finally {
      await sb.close();
    }
  });
});

describe('advance(days)', () => {
  test('moves today forward with new orders, settled pending orders, new and anonymised users, and new interactions', async () => {
    const { sb } = h;
    const world = sb.world;
    const ordersBefore = world.orders.count;
    const pendingBefore = world
      .ordersOf(h.groupId)
      .filter((o) => o.status === 'Pending')
      .map((o) => o.order_id);
    const user = world.users.inGroup(h.groupId).find((u) => u.status === 'Active')!;
    const interactionsBefore = world.interactionsOf(user).length;
    const lastBefore = (
      await h.call('/v3/orders', { order_created_from: '2026-11-22 00:00:00', order_created_to: '2026-11-24 23:59:59' })
    ).body.total;
    expect(lastBefore).toBe(0);
    const report = sb.advance(3);
    expect(world.today).toBe('2026-11-25');
    expect(report.newOrders).toBe(world.orders.count - ordersBefore);
    expect(report.newOrders).toBeGreaterThan(0);
    expect(report.newUsers.length).toBeGreaterThan(0);
    expect(report.anonymised.length).toBeGreaterThan(0);
    expect(report.statusChanges).toBeGreaterThan(0);
    const fresh = (
      await h.org('/v3/orders', {
        organisation_group_id: h.groupId,
        order_created_from: '2026-11-22 00:00:00',
        order_created_to: '2026-11-24 23:59:59',
        per_page: 100,
      })
    ).body;
    expect(fresh.total).toBe(
      world.ordersOf(h.groupId, { from: '2026-11-22 00:00:00', to: '2026-11-24 23:59:59' }).length,
    );
    expect(fresh.total).toBeGreaterThan(0);
    expect(pendingBefore.length).toBeGreaterThan(0);
    for (const id of pendingBefore) expect(world.orderById(id)!.status).not.toBe('Pending');
    const anonymised = world.users.get(report.anonymised[0])!;
    const got = await h.org(`/v3/user/get/id/${anonymised.id}`, { organisation_group_id: anonymised.groupId });
    expect(got.body.data.user).toMatchObject({ status: 'Anonymised', email: null });
    expect(world.interactionsOf(user).length).toBeGreaterThanOrEqual(interactionsBefore);
    expect((await h.call('/v3/group')).body.timestamp.startsWith('2026-11-25')).toBe(true);
  });
});

describe('determinism', () => {
  test('the same seed and today give the same data; another seed gives other data', async () => {
    const [a, b, c] = await Promise.all([
      startSandbox({ today: TODAY, seed: 7 }),
      startSandbox({ today: TODAY, seed: 7 }),
      startSandbox({ today: TODAY, seed: 8 }),
    ]);
    try {
      const page = async (sb: typeof a) => {
        const g = sb.credentials.group[0];
        const t = await token(sb, g.client_id, g.client_secret);
        return (await send(sb.baseUrl, '/v3/orders', { body: { per_page: 100, page: 3 }, token: t })).body.data;
      };
      expect(await page(a)).toEqual(await page(b));
      expect(await page(a)).not.toEqual(await page(c));
      expect(a.world.ordersOf(11).map((o) => o.created_at)).toEqual(b.world.ordersOf(11).map((o) => o.created_at));
      expect(a.advance(2)).toEqual(b.advance(2));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});
