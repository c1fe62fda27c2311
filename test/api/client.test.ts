import { describe, expect, test } from 'vitest';
import { ApiError, PerksClient, type ClientOptions } from '../../src/api/index.js';
import { startProxy } from '../support/proxy.js';
import { createServer } from 'node:net';
import { sandboxClient } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const sandbox = sandboxForFile({ rateLimit: 100_000, today: '2026-11-22' });

const groupClient = (extra: Partial<ClientOptions> = {}) => sandboxClient(sandbox(), extra);

function orgClient(extra: Partial<ClientOptions> = {}) {
  const cred = sandbox().credentials.organisation;
  return new PerksClient({
    baseUrl: sandbox().baseUrl,
    clientId: cred.client_id,
    clientSecret: cred.client_secret,
    rateLimit: 100_000,
    organisationLevel: true,
    minRetryDelayMs: 5,
    ...extra,
  });
}

async function collect<T>(it: AsyncIterable<{ records: T[] }>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of it) out.push(...page.records);
  return out;
}

describe('the client against the sandbox', () => {
  test('one token serves many calls', async () => {
    const client = groupClient();
    await client.call('getGroup');
    await client.call('listUsers', { body: { per_page: 5 } });
    await client.call('listOffers', { body: { per_page: 5 } });
    expect(client.counters.tokenRequests).toBe(1);
    expect(client.counters.calls).toBe(4);
    await client.close();
  });

  test('every user lifecycle operation round-trips', async () => {
    const client = groupClient();
    // the file's sandbox is its own: fixed addresses are new to it (no clock needed to make them unique)
    const email = 'round.trip.client-test@example.com';
    const created = await client.call('createUser', {
      body: { email, first_name: 'Round', last_name: 'Trip', UID: 'rt-client-test' },
    });
    expect(created.email).toBe(email);
    const byEmail = await client.call('getUser', { path: { identifier: 'email', identifier_value: email } });
    expect(byEmail.id).toBe(created.id);
    await client.call('updateUser', {
      path: { identifier: 'id', identifier_value: created.id },
      body: { email, first_name: 'Changed' },
    });
    await client.call('deactivateUser', { path: { identifier: 'id', identifier_value: created.id } });
    await client.call('restoreUser', { path: { identifier: 'id', identifier_value: created.id } });
    const login = await client.call('loginUrl', { path: { identifier: 'id', identifier_value: created.id } });
    expect(login.login_url).toMatch(/^https?:\/\//);
    const anon = await client.call('anonymiseUser', {
      path: { identifier: 'id', identifier_value: created.id },
      body: { maintain_uid: true },
    });
    expect(anon.email ?? null).toBeNull();
    const known = await client.call('makeKnownUser', {
      path: { identifier: 'id', identifier_value: created.id },
      body: { email, get_login: true },
    });
    expect(known.email).toBe(email);
    expect(known.login_url).toBeTruthy();
    const withUrl = await client.call('createUserWithLoginUrl', {
      body: { email: 'login-url.client-test@example.com', return_user_details: true },
    });
    expect(withUrl.user?.id).toBeGreaterThan(0);
    await client.call('bulkCreateUsers', { body: { data: [{ email: 'bulk.client-test@example.com' }] } });
    await client.close();
  });

  test('read operations decode with the shared declarations', async () => {
    const client = groupClient();
    const group = await client.call('getGroup');
    expect(typeof group.sandbox).toBe('boolean');
    const users = await collect(client.paginate('listUsers'));
    expect(users.length).toBeGreaterThan(0);
    const offers = await collect(client.paginate('listOffers'));
    const offer = await client.call('getOffer', { path: { id: offers[0].id } });
    expect(offer.id).toBe(offers[0].id);
    const user = users[0];
    const path = { identifier: 'id', identifier_value: user.id } as const;
    await client.call('userStats', { path });
    const credit = await collect(client.paginate('userCredit', { path }));
    expect(Array.isArray(credit)).toBe(true);
    await client.call('createInteraction', {
      path,
      body: {
        interaction_id: 424242,
        interaction_type: 'test',
        interaction_at: '2026-11-01T10:00:00Z',
        interaction_details: { a: 1 },
      },
    });
    const interactions = await collect(client.paginate('listInteractions', { path }));
    expect(interactions.some((i) => i.interaction_id === '424242')).toBe(true);
    const orders = await collect(
      client.paginate('listOrders', {
        body: { order_created_from: '2026-01-01 00:00:00', order_created_to: '2026-11-21 23:59:59' },
      }),
    );
    expect(orders.length).toBeGreaterThan(0);
    expect(typeof orders[0].face_value).toBe('number');
    const stats = await collect(
      client.paginate('redemptionStats', {
        body: {
          identifier: 'id',
          identifier_value: users.slice(0, 50).map((u) => String(u.id)),
          start_date: '2026-01-01',
          end_date: '2026-11-21',
        },
      }),
    );
    expect(stats.length).toBeGreaterThan(0);
    await client.call('listUserOrders', {
      path: { identifier: 'email', identifier_value: user.email ?? 'x@example.com' },
    });
    await client.close();
  });

  test('an organisation token names its group, and the client requires it', async () => {
    const client = orgClient();
    const groups = await client.call('listGroups');
    expect(groups.length).toBeGreaterThanOrEqual(2);
    await expect(client.call('getGroup')).rejects.toThrow(/organisation level/);
    const g = await client.call('getGroup', { group: groups[1].id });
    expect(g.id).toBe(groups[1].id);
    await client.close();
  });

  test('full paging returns every record exactly once under 5% server errors and a revoked token', async () => {
    const reference = await collect(
      groupClient().paginate('listOrders', {
        body: { order_created_from: '2025-01-01 00:00:00', order_created_to: '2026-11-21 23:59:59' },
      }),
    );
    sandbox().setFaults({ errorRate: 0.05, revokeTokenEvery: 7 });
    try {
      const client = groupClient();
      const got = await collect(
        client.paginate(
          'listOrders',
          { body: { order_created_from: '2025-01-01 00:00:00', order_created_to: '2026-11-21 23:59:59' } },
          { perPage: 20 },
        ),
      );
      const ids = got.map((o) => o.order_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(reference.map((o) => o.order_id).sort());
      expect(client.counters.tokenRequests).toBeGreaterThan(1);
    } finally {
      sandbox().setFaults({ errorRate: 0, revokeTokenEvery: 0 });
    }
  });

  test('a 401 leads to exactly one new token and one retry', async () => {
    const client = groupClient();
    await client.call('getGroup');
    sandbox().setFaults({ revokeTokenEvery: 1 });
    try {
      await client.call('getGroup'); // succeeds; the sandbox revokes the token after this use
      const callsBefore = client.counters.calls;
      await client.call('getGroup'); // 401, one new token, one retry
      // The refused call, the token request and the retry: every one counts against the budget.
      expect(client.counters.calls - callsBefore).toBe(3);
    } finally {
      sandbox().setFaults({ revokeTokenEvery: 0 });
    }
    expect(client.counters.tokenRequests).toBe(2);
  });

  test('validation errors are not retried', async () => {
    const client = groupClient();
    await client.call('getGroup');
    const before = client.counters.calls;
    const err = await client.call('createUser', { body: { email: sandboxUserEmail() } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).transient).toBe(false);
    expect(client.counters.calls - before).toBe(1);
  });

  test('a connection the API cuts is retried with the full budget; an API that is not there gives up after 4 attempts', async () => {
    // Six cut connections in a row for one call: more than the budget of an unreachable API, less than the full one.
    let cuts = 0;
    const proxy = await startProxy(sandbox().baseUrl, {
      intercept: (req) => (req.path.endsWith('/group') && cuts++ < 6 ? { reset: true } : undefined),
    });
    try {
      const client = groupClient({ baseUrl: proxy.url });
      const group = await client.call('getGroup');
      expect(group.id).toBe(sandbox().credentials.group[0].organisation_group_id);
      expect(cuts).toBe(7);
      await client.close();
    } finally {
      await proxy.close();
    }

    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const client = groupClient({ baseUrl: `http://127.0.0.1:${port}`, minRetryDelayMs: 1 });
    const err = (await client.call('getGroup').catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.unreachable).toBe(true);
    expect(err.message).toMatch(/could not reach the API \(connect ECONNREFUSED/);
    // The token request is the call that cannot get through: 4 attempts.
    expect(client.counters.calls).toBe(4);
    await client.close();
  });

  test('an API that refuses every new token for operations stops the client after 4 tokens, not 16 per call', async () => {
    const proxy = await startProxy(sandbox().baseUrl, {
      intercept: (req) =>
        req.path.includes('/oauth/token')
          ? undefined
          : { respond: { status: 401, body: '{"message":"Unauthenticated."}' } },
    });
    try {
      const client = groupClient({ baseUrl: proxy.url });
      const err = (await client.call('getGroup').catch((e: unknown) => e)) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect(err.kind).toBe('authentication');
      expect(err.message).toMatch(/refused 4 new tokens in a row \(401\) and no call succeeded/);
      expect(client.counters.tokenRequests).toBe(4);
      expect(proxy.log.filter((e) => !e.path.includes('/oauth/token'))).toHaveLength(4);
      await client.close();
    } finally {
      await proxy.close();
    }
  });

  test('bad client credentials give an authentication error without the secret', async () => {
    const client = groupClient({ clientSecret: 'canary-secret-123456' });
    const err = (await client.call('getGroup').catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).kind).toBe('authentication');
    expect(`${err.message} ${err.stack}`).not.toContain('canary-secret-123456');
  });
});

function sandboxUserEmail(): string {
  const gid = sandbox().credentials.group[0].organisation_group_id;
  const user = [...sandbox().world.users.all()].find((u) => u.groupId === gid && u.email);
  if (!user?.email) throw new Error('the tiny sandbox has no user with an email');
  return user.email;
}
