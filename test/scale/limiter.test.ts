import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClusterError, clusterKey, CredentialLimiter, type ClusterSettings } from '../../src/api/index.js';
import { redact } from '../../src/shared/redact.js';
import { freePort, startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

let keys = 0;
const settings = (extra: Partial<ClusterSettings> = {}): ClusterSettings => ({
  redisUrl: redis.url,
  key: `perks-test-${process.pid}-${++keys}`,
  ...extra,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs one job on the limiter and says when it started, relative to t0. */
const startOf = async (limiter: CredentialLimiter, t0: number) =>
  (await limiter.schedule(() => Promise.resolve(performance.now() - t0))).value;

describe('one budget per credential across processes (Redis)', () => {
  test('the limiter key names the API and the client id, never the secret', () => {
    const key = clusterKey('https://api.example.com/', 101);
    expect(key).toBe(clusterKey('https://API.example.com', 101));
    expect(key).not.toBe(clusterKey('https://api.example.com', 102));
    expect(key).not.toBe(clusterKey('https://sandbox.example.com', 101));
    expect(key).toMatch(/^perks-[0-9a-f]{24}$/);
  });

  test('two limiters of one credential space their calls as one (600 per minute: at least 100 ms apart)', async () => {
    const cluster = settings();
    const a = new CredentialLimiter({ callsPerMinute: 600, cluster });
    const b = new CredentialLimiter({ callsPerMinute: 600, cluster });
    try {
      const t0 = performance.now();
      const starts = (await Promise.all(Array.from({ length: 16 }, (_, i) => startOf(i % 2 ? a : b, t0)))).sort(
        (x, y) => x - y,
      );
      // Redis hands out slots 101 ms apart; a timer that fires late (a busy machine) can bring one call
      // closer to the next, never a later call earlier: any k calls span at least (k - 1) slots, minus that lateness.
      // (The first and last calls are one such pair: 16 calls span at least 15 slots less 60 ms, where two
      // limiters that did not share their budget would finish in about 8 slots.)
      for (let i = 0; i < starts.length; i++) {
        for (let j = i + 1; j < starts.length; j++)
          expect(starts[j] - starts[i], `calls ${i} and ${j}`).toBeGreaterThanOrEqual((j - i) * 101 - 60);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  test('a 429 seen by one process pauses the other, and the pause ends even if the first one is gone', async () => {
    const cluster = settings();
    const a = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    const b = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    await Promise.all([startOf(a, 0), startOf(b, 0)]);
    a.throttled(1200);
    await a.stop(); // a dies: its own timer to end the pause goes with it
    await sleep(50);
    const asked = performance.now();
    const started = await startOf(b, asked);
    expect(started).toBeGreaterThanOrEqual(1000);
    expect(started).toBeLessThan(3000);
    // The pace slowed down for everyone: b adopted a's slower spacing.
    expect(b.currentRate).toBeLessThan(6000 / 1.2);
    await b.stop();
  });

  test('a request another process admitted writes only after a pause recorded in Redis, even before its message arrives', async () => {
    const cluster = settings();
    const b = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    await startOf(b, 0);
    expect(b.untilResumed()).toBeDefined(); // clustered: every write asks Redis first
    await b.untilResumed();
    // A process that read a 429 records the pause before anything else (and dies before publishing it).
    await admin.set(`b_${cluster.key}_perks_pause`, '1', 'PX', 800);
    const asked = performance.now();
    await b.untilResumed();
    expect(performance.now() - asked).toBeGreaterThanOrEqual(700);
    await b.stop();
  });

  test('a process that joins after a dead process paused the credential is not blocked by it', async () => {
    const cluster = settings();
    const a = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    await startOf(a, 0);
    a.throttled(300);
    await a.stop(); // the reservoir stays at 0 in Redis; nobody is left to lift it
    await sleep(400);
    const c = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    const asked = performance.now();
    expect(await startOf(c, asked)).toBeLessThan(1000);
    await c.stop();
  });

  test('the shared state expires once every process is gone', async () => {
    const cluster = settings({ idleTimeoutMs: 500 });
    const a = new CredentialLimiter({ callsPerMinute: 6000, cluster });
    await startOf(a, 0);
    expect((await admin.keys(`b_${cluster.key}*`)).length).toBeGreaterThan(0);
    await a.stop();
    await sleep(900);
    expect(await admin.keys(`b_${cluster.key}*`)).toEqual([]);
  });

  test('an unreachable Redis stops the first call with one line that names the server but not the password', async () => {
    const port = await freePort();
    const limiter = new CredentialLimiter({
      callsPerMinute: 120,
      cluster: settings({ redisUrl: `redis://:${redis.password}@127.0.0.1:${port}`, connectTimeoutMs: 500 }),
    });
    const err = await limiter.schedule(() => Promise.resolve('never')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterError);
    const message = (err as Error).message;
    expect(message).toContain(`PERKS_REDIS_URL: cannot reach Redis at redis://127.0.0.1:${port} within 1 s`);
    expect(message).not.toContain(redis.password);
    expect(message.split('\n')).toHaveLength(1);
    // The password is a registered secret: any line that quoted the URL would be redacted.
    expect(redact(`redis://:${redis.password}@127.0.0.1`)).not.toContain(redis.password);
    await limiter.stop();
  });
});
