/**
 * Answers the sandbox does not give on its own, made by a node:http proxy in front of it: an empty 200,
 * a token without the envelope, a user under `data.user` or directly in `data`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PerksClient } from '../../src/api/index.js';
import { postOnce } from '../../src/writeback/poster.js';
import { apiCalls, startProxy, withHooks, type Proxy } from '../support/proxy.js';
import { sandboxClient } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const sandbox = sandboxForFile({ seed: 11, rateLimit: 100_000, today: '2026-11-22' });
let proxy: Proxy;

beforeAll(async () => {
  proxy = await startProxy(sandbox().baseUrl);
});
afterAll(async () => {
  await proxy?.close();
});

const client = (): PerksClient => sandboxClient(sandbox(), { baseUrl: proxy.url });

function aUser() {
  const gid = sandbox().credentials.group[0].organisation_group_id;
  const user = sandbox()
    .world.users.inGroup(gid)
    .find((u) => u.status === 'Active');
  if (!user) throw new Error('the tiny sandbox has no active user');
  return { gid, user };
}

describe('odd answers over HTTP', () => {
  test('an empty 200 is a cut-off body: the call is retried and succeeds on its second request', async () => {
    let empties = 0;
    const c = client();
    const groups = await withHooks(
      proxy,
      {
        intercept: (req) =>
          req.path === '/v3/group/list' && empties++ === 0 ? { respond: { status: 200, body: '' } } : undefined,
      },
      () => c.call('listGroups'),
    );
    expect(groups.length).toBeGreaterThan(0);
    expect(apiCalls(proxy.log).map((e) => [e.path, e.status])).toEqual([
      ['/v3/group/list', 200],
      ['/v3/group/list', 200],
    ]);
    expect(apiCalls(proxy.log)[0].intercepted).toBe(true);
    expect(c.counters.retries).toBe(1);
    await c.close();
  });

  test('an interaction stored upstream but answered with an empty 200 is found in the list, not posted twice', async () => {
    const { gid, user } = aUser();
    const row = {
      interaction_id: 9_100_001,
      organisation_group_id: gid,
      identifier: 'id' as const,
      identifier_value: String(user.id),
      kind: 'test',
      interaction_type: 'odd-answer-test',
      interaction_at: '2026-11-21T10:00:00.000Z',
      interaction_details: {},
    };
    const post = client();
    const list = client();
    const isPost = (path: string) => path.startsWith('/v3/Interactions/id/');
    const outcome = await withHooks(
      proxy,
      { rewriteResponse: (req, answer) => (isPost(req.path) ? { ...answer, body: '' } : answer) },
      () => postOnce(row, { post, list, minRetryDelayMs: 5 }),
    );
    expect(outcome).toEqual({ status: 'sent', recovered: true });
    expect(proxy.log.filter((e) => isPost(e.path))).toHaveLength(1);
    expect(
      sandbox()
        .world.interactionsOf(user)
        .filter((i) => i.interaction_id === String(row.interaction_id)),
    ).toHaveLength(1);
    await post.close();
    await list.close();
  });

  test('a token answered without the envelope is used as one', async () => {
    const bare: unknown[] = [];
    const c = client();
    const group = await withHooks(
      proxy,
      {
        rewriteResponse: (req, answer) => {
          if (!req.path.startsWith('/v3/oauth/token')) return answer;
          const token = JSON.parse(answer.body).data;
          bare.push(token);
          return { ...answer, body: JSON.stringify(token) };
        },
      },
      () => c.call('getGroup'),
    );
    expect(bare).toHaveLength(1);
    expect(bare[0]).toMatchObject({ access_token: expect.any(String), expires_in: expect.any(Number) });
    expect(bare[0]).not.toHaveProperty('data');
    expect(group.id).toBe(sandbox().credentials.group[0].organisation_group_id);
    expect(c.counters.tokenRequests).toBe(1);
    await c.close();
  });

  test('a user under data.user and a user directly in data decode to the same user', async () => {
    const { user } = aUser();
    const args = { path: { identifier: 'id' as const, identifier_value: String(user.id) } };
    const c = client();
    const shapes: string[] = [];
    const underUser = await withHooks(
      proxy,
      {
        rewriteResponse: (req, answer) => {
          if (req.path.startsWith('/v3/user/get/')) shapes.push(Object.keys(JSON.parse(answer.body).data).join(','));
          return answer;
        },
      },
      () => c.call('getUser', args),
    );
    const direct = await withHooks(
      proxy,
      {
        rewriteResponse: (req, answer) => {
          if (!req.path.startsWith('/v3/user/get/')) return answer;
          const body = JSON.parse(answer.body);
          return { ...answer, body: JSON.stringify({ ...body, data: body.data.user }) };
        },
      },
      () => c.call('getUser', args),
    );
    // The sandbox itself answers with data.user.
    expect(shapes).toEqual(['user']);
    expect(underUser).toMatchObject({ id: user.id, email: user.email });
    expect(direct).toEqual(underUser);
    await c.close();
  });
  test('a gzip-compressed answer is decoded; a redirect stops the call with the address to set', async () => {
    const c = client();
    const plain = await c.call('listGroups');
    const { gzipSync } = await import('node:zlib');
    const zipped = await withHooks(
      proxy,
      {
        intercept: (req) =>
          req.path === '/v3/group/list'
            ? {
                respond: {
                  status: 200,
                  headers: { 'content-encoding': 'gzip' },
                  body: gzipSync(JSON.stringify({ status: 200, data: plain })),
                },
              }
            : undefined,
      },
      () => c.call('listGroups'),
    );
    expect(zipped).toEqual(plain);
    const moved = withHooks(
      proxy,
      {
        intercept: (req) =>
          req.path === '/v3/group/list'
            ? { respond: { status: 301, headers: { location: 'https://api.example.test/v3/group/list' } } }
            : undefined,
      },
      () => c.call('listGroups'),
    );
    await expect(moved).rejects.toThrow(
      /HTTP 301: the API redirects to https:\/\/api\.example\.test\/v3\/group\/list: set PERKS_BASE_URL/,
    );
    await c.close();
  });
});
