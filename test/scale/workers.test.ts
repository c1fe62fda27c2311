import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { maxCallsInWindow } from '../../src/sandbox/index.js';
import { perksExtract } from '../support/cli.js';
import { streamRows } from '../support/lake-check.js';
import { orgEnv, SANDBOX_DEFAULTS } from '../support/sandbox.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const LIMIT = 300;
let redis: TestRedis;
const sandbox = sandboxForFile({ seed: 31, rateLimit: LIMIT, tokenRateLimit: SANDBOX_DEFAULTS.tokenRateLimit });

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('worker processes sharing one credential through Redis', () => {
  test(`two extract processes on one credential stay within ${LIMIT} calls per minute together, with no 429, and land every user once`, async () => {
    const out = tempOut('perks-scale-workers-');
    const env = orgEnv(sandbox(), out, { PERKS_RATE_LIMIT: String(LIMIT), PERKS_REDIS_URL: redis.url });
    const runs = await Promise.all(
      [1, 2].map((k) => perksExtract(['--quiet', '--streams', 'credit', '--shard', `${k}/2`], env)),
    );
    for (const r of runs) expect(r.code, r.stdout + r.stderr).toBe(0);

    const client = String(sandbox().credentials.organisation.client_id);
    const stats = sandbox().stats();
    const times = stats.callTimes[client];
    expect(stats.throttledByClient[client] ?? 0).toBe(0);
    expect(maxCallsInWindow(times, 60_000)).toBeLessThanOrEqual(LIMIT);
    // The run is shorter than a minute: over any 10 s, two processes that each believed they own the
    // limit would make twice LIMIT/6; one shared budget makes at most LIMIT/6 (+1 at the window's edge,
    // +2 for requests that a busy machine delivers late and so closer to the next).
    expect(maxCallsInWindow(times, 10_000)).toBeLessThanOrEqual(LIMIT / 6 + 3);
    const perMinute = ((times.length - 1) / (times.at(-1)! - times[0])) * 60_000;
    expect(perMinute / LIMIT).toBeGreaterThan(0.85);

    const users = await streamRows(out, 'users');
    expect(users.length).toBeGreaterThan(50);
    expect((await streamRows(out, 'credit')).length).toBe(users.length);
    for (const r of runs) {
      expect(r.stdout + r.stderr).not.toContain(redis.password);
      expect(r.stdout + r.stderr).not.toContain(sandbox().credentials.organisation.client_secret);
    }
  }, 240_000);

  test('a bad --shard or PERKS_REDIS_URL stops the run before any call with one line and exit code 2, never showing the password', async () => {
    const out = tempOut('perks-scale-bad-');
    const before = sandbox().stats().calls;
    const shard = await perksExtract(['--shard', '3/2'], orgEnv(sandbox(), out));
    expect(shard.code).toBe(2);
    expect(shard.stderr.trim().split('\n')).toEqual([
      'perks: --shard="3/2" is invalid: expected K/N with 1 <= K <= N <= 1024, e.g. --shard 2/4',
    ]);
    const url = await perksExtract(
      [],
      orgEnv(sandbox(), out, { PERKS_REDIS_URL: `http://:${redis.password}@127.0.0.1:${redis.port}` }),
    );
    expect(url.code).toBe(2);
    expect(url.stderr.trim().split('\n')).toHaveLength(1);
    expect(url.stderr).toContain('PERKS_REDIS_URL="http://(hidden)@127.0.0.1');
    expect(url.stderr).not.toContain(redis.password);
    expect(sandbox().stats().calls).toBe(before);
  });
});
