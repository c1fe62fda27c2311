import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { operations } from '../../src/resources/operations.js';
import { maxCallsInWindow, startSandbox } from '../../src/sandbox/index.js';
import { harness, send, token, TODAY, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

describe('routing', () => {
  test('an unknown path is 404 and a wrong method on a known path is 405 with Allow', async () => {
    for (const path of ['/v3/nope', '/v3/user', '/v4/orders', '/v3/interactions/list/id/1', '/v3/user/get/id']) {
      const r = await h.call(path);
      expect(r.status, path).toBe(404);
      expect(typeof r.body.message).toBe('string');
    }
    const del = await h.call('/v3/user/delete/id/1', {}, 'POST');
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('DELETE');
    const get = await send(h.sb.baseUrl, '/v3/orders', { method: 'GET', token: h.groupToken });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await h.call('/v3/orders', {}, 'PUT')).status).toBe(405);
    expect((await send(h.sb.baseUrl, '/v3/oauth/token', { method: 'GET' })).status).toBe(405);
  });
});

describe('validation', () => {
  test('bad JSON, a non-object body and wrong types are 422 naming the field', async () => {
    const badJson = await send(h.sb.baseUrl, '/v3/orders', { raw: '{"page": 1,', token: h.groupToken });
    expect(badJson.status).toBe(422);
    expect(badJson.body.errors).toHaveProperty('body');
    const array = await send(h.sb.baseUrl, '/v3/orders', { raw: '[1,2]', token: h.groupToken });
    expect(array.status).toBe(422);
    const wrong = await h.call('/v3/orders', { page: 'two', brand_id: 'x', order_created_from: '2026-01-01' });
    expect(wrong.status).toBe(422);
    expect(Object.keys(wrong.body.errors).sort()).toEqual(['brand_id', 'order_created_from', 'page']);
    expect(wrong.body.message).toMatch(/^The page field must be a number\. \(and 2 more errors\)$/);
    const calendar = await h.call('/v3/orders', { order_created_to: '2026-02-30 00:00:00' });
    expect(calendar.status).toBe(422);
    expect(calendar.body.errors).toHaveProperty('order_created_to');
  });

  test('per_page 0 and 101 are refused, 1 and 100 accepted, on every paginated listing', async () => {
    const listings: [string, object][] = [
      ['/v3/orders', {}],
      ['/v3/user/list', {}],
      ['/v3/offers/list', {}],
      ['/v3/Interactions/list/id/1', {}],
      ['/v3/user/credit/id/1', {}],
      ['/v3/users/redemption-stats', { identifier: 'id', identifier_value: ['1'] }],
    ];
    const uid = h.sb.world.users.inGroup(h.groupId)[0].id;
    for (const [path, extra] of listings) {
      const p = path.replace('/id/1', `/id/${uid}`);
      for (const perPage of [0, 101]) {
        const r = await h.call(p, { ...extra, per_page: perPage });
        expect(r.status, `${p} per_page ${perPage}`).toBe(422);
        expect(r.body.errors).toHaveProperty('per_page');
      }
      for (const perPage of [1, 100])
        expect((await h.call(p, { ...extra, per_page: perPage })).status, `${p} ${perPage}`).toBe(200);
      expect((await h.call(p, { ...extra, page: 0 })).status).toBe(422);
    }
  });

  test('an unknown identifier kind is 422 on every user path, and a non-numeric id too', async () => {
    const r = await h.call('/v3/user/get/phone/123');
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty('identifier');
    expect((await h.call('/v3/orders/name/bob')).status).toBe(422);
    expect((await h.call('/v3/user/delete/uid/x', {}, 'DELETE')).status).toBe(422);
    const id = await h.call('/v3/user/get/id/abc');
    expect(id.status).toBe(422);
    expect(id.body.errors).toHaveProperty('identifier_value');
    const stats = await h.call('/v3/users/redemption-stats', { identifier: 'UID', identifier_value: ['x'] });
    expect(stats.status).toBe(422);
    expect(stats.body.errors).toHaveProperty('identifier');
  });

  test('more than 100 users in a bulk create is 422 naming data', async () => {
    const data = Array.from({ length: 101 }, (_, i) => ({ email: `bulk${i}@example.com` }));
    const r = await h.call('/v3/user/create/bulk', { data });
    expect(r.status).toBe(422);
    expect(r.body.errors.data[0]).toMatch(/not have more than 100 items/);
  });

  test('no malformed body makes any operation answer 500', async () => {
    const uid = h.sb.world.users.inGroup(h.groupId)[0].id;
    const junk: unknown[] = [
      null,
      42,
      'text',
      [],
      { page: -1 },
      { per_page: 1e9 },
      { email: 7 },
      { organisation_group_id: 'x' },
      { data: 'x' },
      { identifier_value: {} },
      { interaction_at: 'yesterday' },
      { meta: [] },
    ];
    for (const op of Object.values(operations)) {
      const path = op.path
        .replace('{identifier}', 'id')
        .replace('{identifier_value}', String(uid))
        .replace('{id}', '1001');
      for (const body of junk) {
        const r = await send(h.sb.baseUrl, path, { raw: JSON.stringify(body), token: h.groupToken, method: op.method });
        expect(r.status, `${op.method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        expect(
          r.status === 200 || r.status === 202 || typeof r.body?.message === 'string',
          `${path} ${JSON.stringify(body)} ${r.text}`,
        ).toBe(true);
      }
    }
    expect(h.sb.stats().statuses['500']).toBeUndefined();
  });
});

describe('the rate limit', () => {
  test('past 5 calls a minute a client gets 429 with Retry-After, another client is unaffected, and stats show the window', async () => {
    const sb = await startSandbox({ today: TODAY, rateLimit: 5 });
    try {
      const [a, b] = sb.credentials.group;
      const ta = await token(sb, a.client_id, a.client_secret);
      const tb = await token(sb, b.client_id, b.client_secret);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await send(sb.baseUrl, '/v3/group', { body: {}, token: ta })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const limited = await send(sb.baseUrl, '/v3/group', { body: {}, token: ta });
      expect(limited.body.message).toBe('Too Many Attempts.');
      const wait = Number(limited.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(59);
      expect(wait).toBeLessThanOrEqual(60);
      expect((await send(sb.baseUrl, '/v3/group', { body: {}, token: tb })).status).toBe(200);
      sb.setFaults({ retryAfter: 7 });
      expect((await send(sb.baseUrl, '/v3/group', { body: {}, token: ta })).headers.get('retry-after')).toBe('7');
      const stats = sb.stats();
      expect(stats.throttledByClient[String(a.client_id)]).toBe(4);
      expect(stats.callsByClient[String(a.client_id)]).toBe(9);
      expect(maxCallsInWindow(stats.callTimes[String(a.client_id)])).toBe(9);
      expect(stats.callsByPath['/v3/group']).toBe(10);
      expect(stats.callsByOperation.getGroup).toBe(10);
    } finally {
      await sb.close();
    }
  });

  test('successful answers carry X-RateLimit-Limit and X-RateLimit-Remaining', async () => {
    const r = await h.call('/v3/group');
    expect(r.headers.get('x-ratelimit-limit')).toBe('100000');
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeLessThan(100_000);
  });
});

test('maxCallsInWindow counts the busiest 60-second window', () => {
  expect(maxCallsInWindow([0, 1000, 59_999, 60_000, 61_000, 200_000])).toBe(3);
  expect(maxCallsInWindow([0, 10, 20, 59_999, 70_000])).toBe(4);
  expect(maxCallsInWindow([])).toBe(0);
});
