import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ordersJson } from '../../src/sandbox/ops/order-json.js';
import { orderWire } from '../../src/sandbox/ops/wire.js';
import { advanceWorld, World } from '../../src/sandbox/world/index.js';
import { allPages, harness, TODAY, type Harness } from './helpers.js';

const encoded = (world: World, i: number) => JSON.stringify(orderWire(world, world.orders.get(i)));

/** Orders whose written JSON differs from JSON.stringify of the zod-encoded Order (the first few), and whether the whole list matches. */
function mismatches(world: World): { index: number; written: string; encoded: string }[] {
  const all = Array.from({ length: world.orders.count }, (_, i) => i);
  const out = [];
  for (let i = 0; i < world.orders.count && out.length < 3; i++) {
    const written = ordersJson(world, [i]).text();
    if (written !== `[${encoded(world, i)}]`) out.push({ index: i, written, encoded: encoded(world, i) });
  }
  if (out.length === 0 && ordersJson(world, all).text() !== `[${all.map((i) => encoded(world, i)).join(',')}]`)
    out.push({ index: -1, written: 'the whole list', encoded: 'differs' });
  return out;
}

describe('orders written straight to JSON text', () => {
  test('every order of a world is byte for byte the Order declaration encoded with zod', () => {
    const world = new World(3, 'small', TODAY);
    expect(world.orders.count).toBeGreaterThan(15_000);
    expect(mismatches(world)).toEqual([]);
  });

  test('after the clock moves and users are renamed (long names too) or anonymised, each order shows its new status and its user as they are now', () => {
    const world = new World(4, 'tiny', TODAY);
    expect(mismatches(world)).toEqual([]);
    const report = advanceWorld(world, 40);
    expect(report.statusChanges).toBeGreaterThan(0);
    expect(report.anonymised.length).toBeGreaterThan(0);
    const renamed = world.users.get(world.orders.user[0])!;
    world.users.update(renamed, {
      first_name: 'Zoë "Q" \\ \u2028 😀',
      last_name: null,
      email: 'odd+\u00e9@mail.example.org',
    });
    const longName = world.users.get(world.orders.user[world.orders.count - 1])!;
    world.users.update(longName, { last_name: 'Long'.repeat(40), email: `${'x'.repeat(150)}@mail.example.org` });
    expect(mismatches(world)).toEqual([]);
    expect(ordersJson(world, [0]).values()[0]).toMatchObject({
      first_name: 'Zoë "Q" \\ \u2028 😀',
      last_name: null,
      email: 'odd+\u00e9@mail.example.org',
    });
  });
});

describe('order pages', () => {
  let h: Harness;
  let bare: Harness;
  beforeAll(async () => {
    [h, bare] = await Promise.all([harness(), harness({ bareListings: true })]);
  });
  afterAll(() => Promise.all([h.sb.close(), bare.sb.close()]));

  test('are the JSON of the envelope with its fields in the usual order, with and without pagination fields', async () => {
    const { pages } = await allPages(
      (b) => h.call('/v3/orders', b),
      { order_created_from: '2026-06-01 00:00:00', order_created_to: '2026-07-31 23:59:59' },
      40,
    );
    expect(pages.length).toBeGreaterThan(1);
    for (const p of pages) {
      expect(JSON.stringify(p.body)).toBe(p.text);
      expect(Object.keys(p.body)).toEqual([
        'status',
        'timestamp',
        'current_page',
        'data',
        'first_page_url',
        'from',
        'last_page',
        'last_page_url',
        'next_page_url',
        'path',
        'per_page',
        'prev_page_url',
        'to',
        'total',
      ]);
    }
    const plain = await bare.call('/v3/orders', { per_page: 5 });
    expect(JSON.stringify(plain.body)).toBe(plain.text);
    expect(Object.keys(plain.body)).toEqual(['status', 'timestamp', 'data']);
    const empty = await h.call('/v3/orders', {
      order_created_from: '2020-01-01 00:00:00',
      order_created_to: '2020-01-02 00:00:00',
    });
    expect(empty.text).toContain('"data":[],');
    expect(JSON.stringify(empty.body)).toBe(empty.text);
  });
  test('answered at the same time, some left half-way by their clients, each page still carries its own orders', async () => {
    const bodies = Array.from({ length: 24 }, (_, k) => ({
      order_created_from: '2026-01-01 00:00:00',
      order_created_to: '2026-10-31 23:59:59',
      page: 1 + (k % 12),
      per_page: 20 + k,
    }));
    const alone = [];
    for (const b of bodies) alone.push((await h.call('/v3/orders', b)).body.data);
    const left = bodies.map(async (b) => {
      const ac = new AbortController();
      const res = await fetch(`${h.sb.baseUrl}/v3/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.groupToken}` },
        body: JSON.stringify(b),
        signal: ac.signal,
      });
      ac.abort();
      await res.text().catch(() => undefined);
    });
    const together = await Promise.all([...bodies.map((b) => h.call('/v3/orders', b)), ...left]);
    for (let k = 0; k < bodies.length; k++) expect(together[k]!.body.data).toEqual(alone[k]);
    const after = await Promise.all(bodies.map((b) => h.call('/v3/orders', b)));
    for (let k = 0; k < bodies.length; k++) expect(after[k].body.data).toEqual(alone[k]);
  });
  test('answered in-process, a page read long after, when its buffer has served other pages, is still its own', async () => {
    const call = (page: number) =>
      h.sb.handler(
        new Request(`${h.sb.baseUrl}/v3/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${h.groupToken}` },
          body: JSON.stringify({ per_page: 10, page }),
        }),
      );
    const early = await Promise.all([1, 2, 3].map(call));
    for (let k = 0; k < 100; k++) await (await call(4 + (k % 3))).arrayBuffer();
    const late = await Promise.all(
      [1, 2, 3].map(async (page) => (await h.call('/v3/orders', { per_page: 10, page })).body.data),
    );
    for (let k = 0; k < 3; k++) expect((await early[k].json()).data).toEqual(late[k]);
  });
});
