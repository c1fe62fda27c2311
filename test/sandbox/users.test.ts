import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { choices } from '../../src/sandbox/index.js';
import { allPages, harness, send, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.sb.close());

const userFields = ['id', 'UID', 'first_name', 'last_name', 'email', 'status', 'created_at'];

describe('creating users', () => {
  test('create returns the new active user, and get finds it by id, email and UID', async () => {
    const r = await h.call('/v3/user/create', {
      email: 'new.person@example.com',
      first_name: 'New',
      last_name: 'Person',
      UID: 'CRM/new 1',
      meta: { sales: 3, location: 'Leeds' },
    });
    expect(r.status).toBe(200);
    const user = r.body.data.user;
    expect(Object.keys(user).sort()).toEqual([...userFields].sort());
    expect(user).toMatchObject({ email: 'new.person@example.com', UID: 'CRM/new 1', status: 'Active' });
    for (const path of [
      `id/${user.id}`,
      `email/${encodeURIComponent('new.person@example.com')}`,
      `UID/${encodeURIComponent('CRM/new 1')}`,
    ]) {
      const got = await h.call(`/v3/user/get/${path}`);
      expect(got.status, path).toBe(200);
      expect(got.body.data.user).toEqual(user);
    }
    expect((await h.call(`/v3/user/get/email/${encodeURIComponent('NEW.Person@example.com')}`)).body.data.user.id).toBe(
      user.id,
    );
  });

  test('an email with + and a UID with a slash are found when URL-encoded', async () => {
    const plus = [...h.sb.world.users.inGroup(h.groupId)].find((u) => u.email?.includes('+'))!;
    expect((await h.call(`/v3/user/get/email/${encodeURIComponent(plus.email!)}`)).body.data.user.id).toBe(plus.id);
    const slash = [...h.sb.world.users.inGroup(h.groupId)].find((u) => u.UID?.includes('/'))!;
    const space = [...h.sb.world.users.inGroup(h.groupId)].find((u) => u.UID?.includes(' '))!;
    expect((await h.call(`/v3/user/get/UID/${encodeURIComponent(space.UID!)}`)).body.data.user.id).toBe(space.id);
    expect((await h.call(`/v3/user/get/UID/${encodeURIComponent(slash.UID!)}`)).body.data.user.id).toBe(slash.id);
  });

  test('a user unknown in the group is 404, including a user of another group', async () => {
    expect((await h.call('/v3/user/get/email/nobody%40example.com')).status).toBe(404);
    const other = h.sb.world.users.inGroup(h.sb.credentials.group[1].organisation_group_id)[0];
    expect((await h.call(`/v3/user/get/id/${other.id}`)).status).toBe(404);
  });

  test('a duplicate create of an active or a deactivated user is rejected with 422 naming the field', async () => {
    const users = h.sb.world.users.inGroup(h.groupId);
    const active = users.find((u) => u.status === 'Active' && u.email)!;
    const deactivated = users.find((u) => u.status === 'Deactivated' && u.email)!;
    for (const u of [active, deactivated]) {
      const r = await h.call('/v3/user/create', { email: u.email!.toUpperCase() });
      expect(r.status).toBe(choices.DUPLICATE_USER_STATUS);
      expect(r.body.errors.email[0]).toBe('The email has already been taken.');
    }
    const byUid = await h.call('/v3/user/create', { email: 'fresh.uid@example.com', UID: active.UID });
    expect(byUid.status).toBe(422);
    expect(byUid.body.errors).toHaveProperty('UID');
  });

  test('send_activation_sms without a phone is 422 naming phone; a bad email is 422 naming email', async () => {
    const sms = await h.call('/v3/user/create', { email: 'sms@example.com', send_activation_sms: true });
    expect(sms.status).toBe(422);
    expect(sms.body.errors).toHaveProperty('phone');
    expect(
      (await h.call('/v3/user/create', { email: 'sms@example.com', send_activation_sms: true, phone: '+441234' }))
        .status,
    ).toBe(200);
    const bad = await h.call('/v3/user/create', { email: 'not-an-email' });
    expect(bad.body.errors.email[0]).toMatch(/valid email/);
    expect((await h.call('/v3/user/create', {})).body.errors.email[0]).toMatch(/required/);
  });

  test('bulk create answers 202 with empty data, then the users appear; existing ones are skipped', async () => {
    const existing = h.sb.world.users.inGroup(h.groupId).find((u) => u.status === 'Active' && u.email)!;
    const data = [
      ...Array.from({ length: 100 }, (_, i) => ({ email: `bulk.${i}@example.com`, UID: `BULK-${i}` })),
      { email: existing.email! },
    ].slice(1);
    const before = h.sb.world.users.inGroup(h.groupId).length;
    const r = await h.call('/v3/user/create/bulk', { send_activation_email: false, data });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 202, data: [] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.sb.world.users.inGroup(h.groupId).length).toBe(before + 99);
    expect((await h.call('/v3/user/get/UID/BULK-99')).body.data.user.email).toBe('bulk.99@example.com');
  });

  test('create with login URL returns the URL, and the user only with return_user_details', async () => {
    const bare = await h.call('/v3/user/create/login-url', { email: 'login.a@example.com' });
    expect(bare.status).toBe(200);
    expect(Object.keys(bare.body.data)).toEqual(['login_url']);
    const full = await h.call('/v3/user/create/login-url', { email: 'login.b@example.com', return_user_details: true });
    expect(Object.keys(full.body.data.user).sort()).toEqual([...userFields].sort());
    expect(full.body.data.login_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sso\//);
  });
});

describe('reading and changing users', () => {
  test('the user list pages through every user of the group in id order with all list fields', async () => {
    const { items, pages } = await allPages((b) => h.call('/v3/user/list', b), {}, 7);
    const truth = h.sb.world.users.inGroup(h.groupId);
    expect(items.map((u) => u.id)).toEqual(truth.map((u) => u.id));
    expect(Object.keys(items[0]).sort()).toEqual([
      'UID',
      'alt_uid',
      'created_at',
      'deleted_at',
      'email',
      'first_name',
      'id',
      'last_login',
      'last_name',
      'login_count',
      'status',
      'updated_at',
    ]);
    expect(new Set(items.map((u) => u.status))).toEqual(new Set(['Active', 'Deactivated', 'Anonymised']));
    const first = pages[0].body;
    expect(first).toMatchObject({
      current_page: 1,
      from: 1,
      to: 7,
      per_page: 7,
      prev_page_url: null,
      total: truth.length,
    });
    expect(first.next_page_url).toBe(`${h.sb.baseUrl}/v3/user/list?page=2`);
    expect(first.path).toBe(`${h.sb.baseUrl}/v3/user/list`);
    const last = pages.at(-1)!.body;
    expect(last.current_page).toBe(last.last_page);
    expect(last.next_page_url).toBeNull();
    expect(last.to).toBe(truth.length);
  });

  test('the user list without per_page gives 50 a page', async () => {
    const r = await h.call('/v3/user/list');
    expect(r.body.per_page).toBe(50);
    expect(r.body.data.length).toBe(Math.min(50, r.body.total));
  });

  test('update changes the given fields and answers the user; an email taken by another user is 422', async () => {
    const created = (await h.call('/v3/user/create', { email: 'upd@example.com', first_name: 'Before' })).body.data
      .user;
    const r = await h.call(`/v3/user/update/id/${created.id}`, { email: 'upd2@example.com', first_name: 'After' });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ id: created.id, email: 'upd2@example.com', first_name: 'After' });
    expect((await h.call(`/v3/user/update/id/${created.id}`, { first_name: 'X' })).body.errors.email[0]).toMatch(
      /required/,
    );
    const taken = await h.call(`/v3/user/update/id/${created.id}`, { email: 'new.person@example.com' });
    expect(taken.status).toBe(422);
  });

  test('a login URL signs the user in once; a second use is 410', async () => {
    const user = (await h.call('/v3/user/create', { email: 'sso@example.com' })).body.data.user;
    const r = await h.call(`/v3/user/login-url/id/${user.id}`);
    const url: string = r.body.data.login_url;
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(410);
    expect(h.sb.world.users.get(user.id)!.login_count).toBe(1);
    const listed = (await allPages((b) => h.call('/v3/user/list', b), {}, 100)).items.find((u) => u.id === user.id);
    expect(listed.login_count).toBe(1);
    expect(listed.last_login).not.toBeNull();
  });

  test('the organisation token reaches users only with organisation_group_id', async () => {
    const u = h.sb.world.users.inGroup(13).find((x) => x.status === 'Active')!;
    const missing = await h.org(`/v3/user/get/id/${u.id}`);
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toHaveProperty('organisation_group_id');
    expect((await h.org(`/v3/user/get/id/${u.id}`, { organisation_group_id: 13 })).body.data.user.id).toBe(u.id);
    expect((await h.org(`/v3/user/get/id/${u.id}`, { organisation_group_id: 12 })).status).toBe(404);
    expect((await h.org(`/v3/user/get/id/${u.id}`, { organisation_group_id: 99 })).status).toBe(
      choices.FOREIGN_GROUP_STATUS,
    );
    expect((await h.call(`/v3/user/list`, { organisation_group_id: 13 })).status).toBe(choices.FOREIGN_GROUP_STATUS);
    expect((await h.call(`/v3/user/list`, { organisation_group_id: h.groupId })).status).toBe(200);
    const created = await h.org('/v3/user/create', { email: 'org.made@example.com', organisation_group_id: 14 });
    expect(h.sb.world.users.get(created.body.data.user.id)!.groupId).toBe(14);
    expect(
      (
        await send(h.sb.baseUrl, '/v3/user/list', {
          body: { organisation_group_id: 14, per_page: 100 },
          token: h.orgToken,
        })
      ).body.data.map((x: { id: number }) => x.id),
    ).toContain(created.body.data.user.id);
  });
});
