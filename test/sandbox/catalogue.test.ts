import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { choices } from '../../src/sandbox/index.js';
import { allPages, harness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

const groupFields = ['custom_domain', 'display_name', 'id', 'locale', 'name', 'sandbox', 'subdomain', 'timezone'];

describe('groups', () => {
  test('a group token reads its own group, with sandbox as 0 or 1', async () => {
    const r = await h.call('/v3/group');
    expect(Object.keys(r.body.data).sort()).toEqual(groupFields);
    expect(r.body.data).toMatchObject({ id: h.groupId, sandbox: 0, timezone: 'Europe/London', locale: 'en_GB' });
  });

  test('the organisation token lists every group: different timezones, locales, one sandbox group', async () => {
    const r = await h.org('/v3/group/list');
    expect(r.status).toBe(200);
    const groups = r.body.data;
    expect(groups.map((g: { id: number }) => g.id)).toEqual(h.sb.credentials.organisation.organisation_group_ids);
    expect(new Set(groups.map((g: { timezone: string }) => g.timezone))).toEqual(
      new Set(['Europe/London', 'America/New_York', 'Australia/Sydney', 'Europe/Paris']),
    );
    expect(new Set(groups.map((g: { locale: string }) => g.locale)).size).toBe(4);
    expect(groups.map((g: { sandbox: number }) => g.sandbox).sort()).toEqual([0, 0, 0, 1]);
    expect(r.body).not.toHaveProperty('total');
  });

  test('a group token lists only its own group', async () => {
    expect((await h.call('/v3/group/list')).body.data.map((g: { id: number }) => g.id)).toEqual([h.groupId]);
  });

  test('the organisation token needs organisation_group_id for one group, and a foreign group is refused', async () => {
    expect((await h.org('/v3/group')).status).toBe(422);
    expect((await h.org('/v3/group', { organisation_group_id: 13 })).body.data.timezone).toBe('Australia/Sydney');
    expect((await h.org('/v3/group', { organisation_group_id: 77 })).status).toBe(choices.FOREIGN_GROUP_STATUS);
  });
});

describe('offers', () => {
  const listFields = [
    'brand',
    'brand_id',
    'collections',
    'discount',
    'end_date',
    'faq',
    'how_to_redeem',
    'id',
    'image',
    'link',
    'offer',
    'overview',
    'perk_type_format',
    'redemption_in_store',
    'redemption_online',
    'redemption_selected_stores',
    'start_date',
    'terms',
    'title',
    'type',
  ];
  const typeFields = [
    'group_allocated_inventory',
    'id',
    'perk_id',
    'presentation',
    'redeem_from_inventory',
    'redeem_url',
    'redeem_url_protocol',
    'trackable',
    'voucher_code',
  ];
  const detailFields = [
    'collections',
    'faq',
    'how_to_redeem',
    'id',
    'image',
    'offer',
    'offer_link',
    'overview',
    'partner_id',
    'redemption_in_store',
    'redemption_online',
    'redemption_selected_stores',
    'terms',
    'title',
  ];

  test('the offer list pages through every offer with every list field, for either token and no group', async () => {
    const { items, pages } = await allPages((b) => h.org('/v3/offers/list', b), {}, 10);
    expect(items.map((o) => o.id)).toEqual(h.sb.world.offers.map((o) => o.id));
    expect(pages.length).toBe(Math.ceil(h.sb.world.offers.length / 10));
    for (const o of items) {
      expect(Object.keys(o).sort()).toEqual(listFields);
      expect(Object.keys(o.type).sort()).toEqual(typeFields);
      expect(o.collections[0]).toEqual({ id: expect.any(Number), name: expect.any(String) });
      expect(typeof o.redemption_online).toBe('boolean');
    }
    expect(new Set(items.map((o) => o.perk_type_format))).toContain('vouchers');
    expect((await h.call('/v3/offers/list', { per_page: 100 })).body.data).toEqual(items);
  });

  test('offer details carry every detail field, at /v3/offers/get/{id} and the alias /v3/offers/{id}', async () => {
    const id = h.sb.world.offers[3].id;
    const r = await h.org(`/v3/offers/get/${id}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data).sort()).toEqual(detailFields);
    expect(r.body.data.offer_link).toMatch(/^https:\/\//);
    expect((await h.call(`/v3/offers/${id}`)).body.data).toEqual(r.body.data);
  });

  test('an unknown offer is 404', async () => {
    expect((await h.call('/v3/offers/get/999999')).status).toBe(404);
    expect((await h.call('/v3/offers/get/abc')).status).toBe(404);
  });
});

test('the fetch-shaped handler answers in-process exactly as over HTTP', async () => {
  const request = (url: string) =>
    new Request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.groupToken}`, 'content-type': 'application/json' },
      body: '{"per_page":3}',
    });
  const inProcess = await h.sb.handler(request('http://sandbox.test/v3/offers/list'));
  const body = await inProcess.json();
  const overHttp = await h.call('/v3/offers/list', { per_page: 3 });
  expect(inProcess.status).toBe(200);
  expect(body.data).toEqual(overHttp.body.data);
  expect(body.path).toBe('http://sandbox.test/v3/offers/list');
});
