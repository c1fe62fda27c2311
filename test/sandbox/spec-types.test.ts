/**
 * The sandbox sends the JSON type the spec states for each field. The tables below are the spec's
 * (perks-api-v3.md, "Resources and their fields" and the endpoint table), transcribed; `?` marks a value
 * the spec itself allows to be null, or a moment that has not happened yet (docs/assumptions.md, Sandbox).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { allPages, harness, type Harness } from './helpers.js';

type Kind = 'integer' | 'number' | 'string' | 'boolean' | 'boolean01' | 'timestamp' | 'url' | 'array' | 'object';
type Table = Record<string, Kind | `${Kind}?`>;

const GROUP: Table = {
  id: 'integer',
  name: 'string',
  display_name: 'string',
  sandbox: 'boolean01',
  locale: 'string',
  timezone: 'string',
  custom_domain: 'string?',
  subdomain: 'string',
};
const OFFER_CONTENT: Table = {
  id: 'integer',
  title: 'string',
  overview: 'string',
  terms: 'string',
  faq: 'string',
  how_to_redeem: 'string',
  offer: 'string',
  redemption_in_store: 'boolean',
  redemption_online: 'boolean',
  redemption_selected_stores: 'boolean',
  image: 'url',
  collections: 'array',
};
const OFFER_DETAIL: Table = { ...OFFER_CONTENT, partner_id: 'integer', offer_link: 'url' };
const OFFER_LIST_ITEM: Table = {
  ...OFFER_CONTENT,
  brand: 'string',
  brand_id: 'integer',
  start_date: 'timestamp',
  end_date: 'timestamp',
  link: 'url',
  discount: 'integer',
  perk_type_format: 'string',
  type: 'object',
};
const OFFER_TYPE: Table = {
  id: 'integer',
  perk_id: 'integer',
  voucher_code: 'string',
  presentation: 'string',
  redeem_url_protocol: 'string',
  redeem_url: 'url',
  trackable: 'boolean',
  redeem_from_inventory: 'boolean',
  group_allocated_inventory: 'boolean',
};
const COLLECTION: Table = { id: 'integer', name: 'string' };
const ORDER: Table = {
  order_id: 'integer',
  order_status: 'string',
  first_name: 'string',
  last_name: 'string',
  email: 'string',
  perk_id: 'integer',
  brand: 'string',
  offer: 'string',
  offer_excerpt: 'string',
  face_value: 'number',
  order_total_paid: 'number',
  order_credit: 'number',
  order_currency: 'string',
  order_saving: 'number',
  group_revenue: 'number',
};
const CREDIT: Table = { available: 'number', spent: 'number', expired: 'number', credits: 'array' };
const CREDIT_ITEM: Table = {
  status: 'string',
  amount: 'number',
  remaining_amount: 'number',
  expires_at: 'timestamp',
  created_at: 'timestamp',
};
const STATS_ITEM: Table = {
  id: 'integer',
  UID: 'string?',
  email: 'string',
  all_redemptions_count: 'integer',
  egift_orders_count: 'integer',
  egift_face_value: 'number',
  egift_cost: 'number',
  egift_savings: 'number',
};
/** The endpoint table: "all_redemptions_count, egift_face_value, egift_cost, order_credit, egift_savings (integers)". */
const USER_STATS: Table = {
  all_redemptions_count: 'integer',
  egift_face_value: 'integer',
  egift_cost: 'integer',
  order_credit: 'integer',
  egift_savings: 'integer',
};
/** UID and alt_uid are optional on creation: null when the integrator gave none (docs/assumptions.md, Sandbox). */
const USER: Table = {
  id: 'integer',
  UID: 'string?',
  first_name: 'string',
  last_name: 'string',
  email: 'string',
  status: 'string',
  created_at: 'timestamp',
};
const USER_LIST_ITEM: Table = {
  ...USER,
  alt_uid: 'string?',
  last_login: 'timestamp?',
  login_count: 'integer',
  updated_at: 'timestamp',
  deleted_at: 'timestamp?',
};
const INTERACTION: Table = {
  id: 'integer',
  interaction_id: 'string',
  organisation_id: 'string',
  organisation_group_id: 'integer',
  interaction_type_id: 'integer',
  user_id: 'integer',
  interaction_at: 'timestamp',
  interaction_details: 'object',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

function is(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'boolean01':
      return v === 0 || v === 1;
    case 'string':
      return typeof v === 'string';
    case 'timestamp':
      return typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(v);
    case 'url':
      return typeof v === 'string' && /^https?:\/\/\S+$/.test(v);
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

/** Every field of the table present with its type; a field the table does not know is reported too. */
function mismatches(table: Table, record: Record<string, unknown>): string[] {
  const bad: string[] = [];
  for (const [field, spec] of Object.entries(table)) {
    const nullable = spec.endsWith('?');
    const kind = spec.replace('?', '') as Kind;
    const v = record[field];
    if (!(field in record)) bad.push(`${field}: missing`);
    else if (!(is(kind, v) || (nullable && v === null))) bad.push(`${field}: ${JSON.stringify(v)} is not ${spec}`);
  }
  for (const field of Object.keys(record)) if (!(field in table)) bad.push(`${field}: not in the spec`);
  return bad;
}

function expectAll(table: Table, records: Record<string, unknown>[]): void {
  expect(records.length).toBeGreaterThan(0);
  const bad = new Set(records.flatMap((r) => mismatches(table, r)));
  expect([...bad]).toEqual([]);
}

let h: Harness;
beforeAll(async () => {
  h = await harness({ scale: 'tiny' });
});
afterAll(() => h.sb.close());

describe("every answer has the spec's types", () => {
  test('groups', async () => {
    expectAll(GROUP, (await h.org('/v3/group/list')).body.data);
  });

  test('offer list items (end_date a timestamp, type.voucher_code a string), their type objects and collections; offer details', async () => {
    const { items } = await allPages((b) => h.org('/v3/offers/list', b), {}, 100);
    expectAll(OFFER_LIST_ITEM, items);
    expectAll(
      OFFER_TYPE,
      items.map((o) => o.type),
    );
    expectAll(
      COLLECTION,
      items.flatMap((o) => o.collections),
    );
    for (const o of items) expect(o.type.voucher_code === '').toBe(o.perk_type_format !== 'codes');
    const details = await Promise.all(
      items.slice(0, 5).map(async (o) => (await h.org(`/v3/offers/get/${o.id}`)).body.data),
    );
    expectAll(OFFER_DETAIL, details);
  });

  test('orders', async () => {
    const r = await h.call('/v3/orders', {
      per_page: 100,
      order_created_from: '2026-10-01 00:00:00',
      order_created_to: '2026-11-21 23:59:59',
    });
    // Names and emails are strings while the ordering user is known (null once anonymised: docs/assumptions.md).
    expectAll(
      ORDER,
      r.body.data.filter((o: { email: string | null }) => o.email !== null),
    );
  });

  test('users, user list items, credit, redemption statistics (bulk and single: five integers) and interactions', async () => {
    const list = (await h.call('/v3/user/list', { per_page: 100 })).body.data.filter(
      (u: { email: string | null }) => u.email !== null,
    );
    expectAll(USER_LIST_ITEM, list);
    const users = list.slice(0, 8);
    expectAll(
      USER,
      await Promise.all(
        users.map(async (u: { id: number }) => (await h.call(`/v3/user/get/id/${u.id}`)).body.data.user),
      ),
    );

    const credit = await Promise.all(
      users.map(async (u: { id: number }) => (await h.call(`/v3/user/credit/id/${u.id}`, { per_page: 100 })).body.data),
    );
    expectAll(CREDIT, credit);
    expectAll(
      CREDIT_ITEM,
      credit.flatMap((c) => c.credits),
    );

    const ids = list.map((u: { id: number }) => String(u.id));
    const bulk = (
      await h.call('/v3/users/redemption-stats', {
        identifier: 'id',
        identifier_value: ids,
        start_date: '2025-11-01',
        end_date: '2026-11-21',
        active_only: true,
      })
    ).body.data;
    expectAll(STATS_ITEM, bulk);

    const active = bulk.filter((s: { egift_orders_count: number }) => s.egift_orders_count > 0).slice(0, 8);
    const single = await Promise.all(
      active.map(
        async (s: { id: number }) =>
          (
            await h.call(`/v3/user/stats/id/${s.id}`, {
              redemption_created_from: '2025-11-01 00:00:00',
              redemption_created_to: '2026-11-21 23:59:59',
            })
          ).body.data,
      ),
    );
    expectAll(USER_STATS, single);
    // The same sums as the bulk item, in whole currency units.
    single.forEach((s, i) => expect(s.egift_face_value).toBe(Math.round(active[i].egift_face_value)));

    const interactions = (
      await Promise.all(
        users.map(
          async (u: { id: number }) => (await h.call(`/v3/Interactions/list/id/${u.id}`, { per_page: 100 })).body.data,
        ),
      )
    ).flat();
    expectAll(INTERACTION, interactions);
  });
});
