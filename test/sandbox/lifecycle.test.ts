import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { choices } from '../../src/sandbox/index.js';
import { harness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

let n = 0;
async function fresh(extra: object = {}) {
  n++;
  const r = await h.call('/v3/user/create', {
    email: `life${n}@example.com`,
    UID: `LIFE-${n}`,
    first_name: 'Life',
    last_name: `Cycle${n}`,
    ...extra,
  });
  return r.body.data.user as { id: number; UID: string; email: string };
}
const get = async (id: number) => (await h.call(`/v3/user/get/id/${id}`)).body.data.user;

describe('the user lifecycle of the spec', () => {
  test('active → deactivate (DELETE) → deactivated, the record kept; → restore → active', async () => {
    const u = await fresh();
    const del = await h.call(`/v3/user/delete/UID/${u.UID}`, {}, 'DELETE');
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual([]);
    expect(await get(u.id)).toMatchObject({ status: 'Deactivated', email: u.email, first_name: 'Life' });
    const restored = await h.call(`/v3/user/restore/id/${u.id}`);
    expect(restored.status).toBe(200);
    expect(restored.body.data.user).toMatchObject({ id: u.id, status: 'Active' });
    expect(h.sb.world.users.get(u.id)!.deleted_at).toBeNull();
  });

  test('a deactivated user cannot log in, and a duplicate create of them is rejected', async () => {
    const u = await fresh();
    await h.call(`/v3/user/delete/id/${u.id}`, {}, 'DELETE');
    expect((await h.call(`/v3/user/login-url/id/${u.id}`)).status).toBe(choices.WRONG_STATE_STATUS);
    expect((await h.call('/v3/user/create', { email: u.email })).status).toBe(choices.DUPLICATE_USER_STATUS);
  });

  test('active → anonymise (UID kept by default) → anonymised, personal fields null, found by id and UID only', async () => {
    const u = await fresh();
    const r = await h.call(`/v3/user/anonymise/id/${u.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      id: u.id,
      UID: u.UID,
      first_name: null,
      last_name: null,
      email: null,
      created_at: expect.any(String),
    });
    expect(await get(u.id)).toMatchObject({ status: 'Anonymised', email: null, first_name: null, last_name: null });
    expect((await h.call(`/v3/user/get/UID/${u.UID}`)).status).toBe(200);
    expect((await h.call(`/v3/user/get/email/${u.email}`)).status).toBe(404);
    expect((await h.call('/v3/user/create', { email: u.email })).status).toBe(200);
    expect((await h.call('/v3/user/create', { email: 'other.life@example.com', UID: u.UID })).status).toBe(
      choices.DUPLICATE_USER_STATUS,
    );
  });

  test('deactivated → anonymise with maintain_uid false → anonymised with no UID', async () => {
    const u = await fresh();
    await h.call(`/v3/user/delete/id/${u.id}`, {}, 'DELETE');
    const r = await h.call(`/v3/user/anonymise/id/${u.id}`, { maintain_uid: false });
    expect(r.body.data.UID).toBeNull();
    expect((await h.call(`/v3/user/get/UID/${u.UID}`)).status).toBe(404);
    expect((await get(u.id)).status).toBe('Anonymised');
  });

  test('anonymised → make-known (email required) → known again, with billing stored and a login URL on get_login', async () => {
    const u = await fresh();
    await h.call(`/v3/user/anonymise/id/${u.id}`, { maintain_uid: false });
    const noEmail = await h.call(`/v3/user/make-known/id/${u.id}`, { first_name: 'Back' });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.errors).toHaveProperty('email');
    const r = await h.call(`/v3/user/make-known/id/${u.id}`, {
      email: `known${u.id}@example.com`,
      UID: `KNOWN-${u.id}`,
      first_name: 'Back',
      last_name: 'Again',
      billing_postcode: 'SW1A 1AA',
      get_login: true,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: u.id,
      UID: `KNOWN-${u.id}`,
      first_name: 'Back',
      last_name: 'Again',
      email: `known${u.id}@example.com`,
    });
    expect(r.body.data.login_url).toMatch(/\/sso\//);
    expect(h.sb.world.users.get(u.id)!.billing).toEqual({ billing_postcode: 'SW1A 1AA' });
    expect((await get(u.id)).status).toBe('Active');
    const noLogin = await fresh();
    await h.call(`/v3/user/anonymise/id/${noLogin.id}`);
    const plain = await h.call(`/v3/user/make-known/id/${noLogin.id}`, { email: `plain${noLogin.id}@example.com` });
    expect(plain.body.data).not.toHaveProperty('login_url');
    expect(plain.body.data.UID).toBe(noLogin.UID);
  });

  test('transitions the table does not allow are 409: deactivate twice, restore an active user, anonymise twice, make known a known user', async () => {
    const u = await fresh();
    expect((await h.call(`/v3/user/restore/id/${u.id}`)).status).toBe(choices.WRONG_STATE_STATUS);
    expect((await h.call(`/v3/user/make-known/id/${u.id}`, { email: 'x@example.com' })).status).toBe(
      choices.WRONG_STATE_STATUS,
    );
    await h.call(`/v3/user/delete/id/${u.id}`, {}, 'DELETE');
    expect((await h.call(`/v3/user/delete/id/${u.id}`, {}, 'DELETE')).status).toBe(choices.WRONG_STATE_STATUS);
    await h.call(`/v3/user/anonymise/id/${u.id}`);
    expect((await h.call(`/v3/user/anonymise/id/${u.id}`)).status).toBe(choices.WRONG_STATE_STATUS);
    expect((await h.call(`/v3/user/restore/id/${u.id}`)).status).toBe(choices.WRONG_STATE_STATUS);
    const upd = await h.call(`/v3/user/update/id/${u.id}`, { email: 'y@example.com' });
    expect(upd.status).toBe(choices.WRONG_STATE_STATUS);
    expect(typeof upd.body.message).toBe('string');
  });

  test('make-known with an email another user holds is rejected as a duplicate', async () => {
    const a = await fresh();
    const b = await fresh();
    await h.call(`/v3/user/anonymise/id/${a.id}`);
    expect((await h.call(`/v3/user/make-known/id/${a.id}`, { email: b.email })).status).toBe(
      choices.DUPLICATE_USER_STATUS,
    );
  });

  test('an anonymised user’s orders no longer show their name or email', async () => {
    const user = h.sb.world.users
      .inGroup(h.groupId)
      .find((u) => u.status === 'Active' && h.sb.world.ordersOf(h.groupId, { userId: u.id }).length > 0)!;
    const before = (await h.call(`/v3/orders/id/${user.id}`, { per_page: 1 })).body.data[0];
    expect(before.email).toBe(user.email);
    await h.call(`/v3/user/anonymise/id/${user.id}`);
    const after = (await h.call(`/v3/orders/id/${user.id}`, { per_page: 1 })).body.data[0];
    expect(after).toMatchObject({ order_id: before.order_id, email: null, first_name: null, last_name: null });
  });
});
