import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { send, TODAY } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ today: TODAY, tokenRateLimit: 6, tokenLifetimeSeconds: 31_536_000 });
});
afterAll(() => sb.close());

const grant = (client_id: unknown, client_secret: unknown, extra: object = {}) => ({
  client_id,
  client_secret,
  grant_type: 'client_credentials',
  scope: '*',
  ...extra,
});

describe('the token endpoint', () => {
  test('group credentials get a one-year JWT-shaped bearer token in the envelope', async () => {
    const g = sb.credentials.group[1];
    const r = await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe(200);
    expect(r.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(r.body.data.token_type).toBe('Bearer');
    expect(r.body.data.expires_in).toBe(31_536_000);
    const parts = r.body.data.access_token.split('.');
    expect(parts).toHaveLength(3);
    for (const p of parts) expect(p).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(parts[0], 'base64url').toString())).toMatchObject({ typ: 'JWT', alg: 'HS256' });
    const me = await send(sb.baseUrl, '/v3/group', { body: {}, token: r.body.data.access_token });
    expect(me.body.data.id).toBe(g.organisation_group_id);
  });

  test('a wrong secret, an unknown client and a missing field are refused with 401, 401 and 422', async () => {
    const g = sb.credentials.group[2];
    const bad = await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, `${g.client_secret}x`) });
    expect(bad.status).toBe(401);
    expect(bad.body.message).toBe('Client authentication failed');
    expect(bad.text).not.toContain(g.client_secret);
    expect((await send(sb.baseUrl, '/v3/oauth/token', { body: grant(999, 'whatever') })).status).toBe(401);
    const missing = await send(sb.baseUrl, '/v3/oauth/token', {
      body: { client_id: g.client_id, grant_type: 'client_credentials', scope: '*' },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.client_secret[0]).toMatch(/required/);
    const grantType = await send(sb.baseUrl, '/v3/oauth/token', {
      body: grant(g.client_id, g.client_secret, { grant_type: 'password' }),
    });
    expect(grantType.status).toBe(422);
    expect(Object.keys(grantType.body.errors)).toEqual(['grant_type']);
  });

  test('calling the token endpoint too often for one client gives 429 with Retry-After, other clients unaffected', async () => {
    const g = sb.credentials.group[3];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) })).status);
    expect(statuses.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(statuses.slice(6)).toEqual([429, 429]);
    const again = await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) });
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const o = sb.credentials.organisation;
    expect((await send(sb.baseUrl, '/v3/oauth/token', { body: grant(o.client_id, o.client_secret) })).status).toBe(200);
    expect(sb.stats().tokenRequestsByClient[String(g.client_id)]).toBe(9);
  });
});

describe('bearer tokens', () => {
  test('a missing, malformed or tampered token is 401 Unauthenticated on every operation', async () => {
    const g = sb.credentials.group[0];
    const r = await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) });
    const good: string = r.body.data.access_token;
    const [h, p, s] = good.split('.');
    const forged = JSON.parse(Buffer.from(p, 'base64url').toString());
    forged.aud = String(sb.credentials.organisation.client_id);
    const tampered = `${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`;
    for (const tok of [undefined, 'nonsense', `${good}x`, tampered]) {
      const res = await send(sb.baseUrl, '/v3/group', { body: {}, token: tok });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Unauthenticated.' });
    }
    expect((await send(sb.baseUrl, '/v3/user/delete/id/1', { body: {}, method: 'DELETE' })).status).toBe(401);
  });

  test('an expired token is refused with 401', async () => {
    const short = await startSandbox({ today: TODAY, tokenLifetimeSeconds: 1 });
    try {
      const g = short.credentials.group[0];
      const r = await send(short.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) });
      expect(r.body.data.expires_in).toBe(1);
      const tok = r.body.data.access_token;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await send(short.baseUrl, '/v3/group', { body: {}, token: tok })).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  test('a token revoked after N calls (fault injection) answers 401, and a new token works', async () => {
    const g = sb.credentials.group[0];
    const tok = (await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) })).body.data
      .access_token;
    sb.setFaults({ revokeTokenEvery: 3 });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(sb.baseUrl, '/v3/group', { body: {}, token: tok })).status);
      expect(statuses).toEqual([200, 200, 200, 401]);
      const fresh = (await send(sb.baseUrl, '/v3/oauth/token', { body: grant(g.client_id, g.client_secret) })).body.data
        .access_token;
      expect((await send(sb.baseUrl, '/v3/group', { body: {}, token: fresh })).status).toBe(200);
      expect(sb.stats().faults.revocations).toBeGreaterThanOrEqual(1);
    } finally {
      sb.setFaults({ revokeTokenEvery: 0 });
    }
  });
});
