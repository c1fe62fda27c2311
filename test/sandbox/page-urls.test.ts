import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { harness, send, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

/** POST to an advertised URL as given (query string included). */
const follow = (url: string, body: unknown = {}) => send(url, '', { body, token: h.groupToken });

describe('page URLs followed as given', () => {
  test('POST next_page_url with an empty body answers the page it names', async () => {
    const first = await h.call('/v3/orders', {});
    expect(first.body.next_page_url).toBe(`${h.sb.baseUrl}/v3/orders?page=2`);
    const second = await follow(first.body.next_page_url);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      current_page: 2,
      from: 51,
      per_page: 50,
      prev_page_url: `${h.sb.baseUrl}/v3/orders?page=1`,
    });
    const byBody = await h.call('/v3/orders', { page: 2 });
    expect(second.body.data.map((o: { order_id: number }) => o.order_id)).toEqual(
      byBody.body.data.map((o: { order_id: number }) => o.order_id),
    );
  });

  test('per_page is read from the query too, and the body wins over the query when both give a value', async () => {
    const fromQuery = await follow(`${h.sb.baseUrl}/v3/user/list?page=3&per_page=4`);
    expect(fromQuery.body).toMatchObject({ current_page: 3, per_page: 4, from: 9, to: 12 });
    const bodyWins = await follow(`${h.sb.baseUrl}/v3/user/list?page=3&per_page=4`, { page: 2, per_page: 5 });
    expect(bodyWins.body).toMatchObject({ current_page: 2, per_page: 5, from: 6, to: 10 });
    const mixed = await follow(`${h.sb.baseUrl}/v3/user/list?page=3`, { per_page: 5 });
    expect(mixed.body).toMatchObject({ current_page: 3, per_page: 5, from: 11 });
  });

  test('a query page that is not a whole number is a 422 naming the field, and operations without paging ignore the query', async () => {
    const bad = await follow(`${h.sb.baseUrl}/v3/orders?page=two`);
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('page');
    const tooBig = await follow(`${h.sb.baseUrl}/v3/orders?per_page=500`);
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.errors).toHaveProperty('per_page');
    const group = await follow(`${h.sb.baseUrl}/v3/group?page=2`);
    expect(group.status).toBe(200);
    expect(group.body.data.id).toBe(h.groupId);
  });
});
