/**
 * Retry-After is a floor for every request the client writes after a 429 arrives: measured by the client's
 * clock (when each request is handed to its socket) and by the server's (a proxy in front of the sandbox).
 * A request written before the 429 arrived was already on its way and is counted apart.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClientOptions, PerksClient, WireEvent } from '../../src/api/index.js';
import { parseRetryAfter } from '../../src/api/outcomes.js';
import { apiCalls, retryAfterKept, startProxy, withHooks, type Proxy, type ProxyHooks } from '../support/proxy.js';
import { SANDBOX_DEFAULTS, sandboxClient } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const sandbox = sandboxForFile({
  seed: 5,
  rateLimit: 100_000,
  tokenRateLimit: SANDBOX_DEFAULTS.tokenRateLimit,
  today: '2026-11-22',
});
let proxy: Proxy;

beforeAll(async () => {
  proxy = await startProxy(sandbox().baseUrl);
});
afterAll(async () => {
  await proxy?.close();
});

const API = (path: string) => !path.startsWith('/v3/oauth/token');

/** A client through the proxy whose wire events land in `wire`. */
const client = (wire: WireEvent[], extra: Partial<ClientOptions> = {}) =>
  sandboxClient(sandbox(), { baseUrl: proxy.url, onWire: (e) => wire.push(e), ...extra });

/** Answers the API calls the predicate picks (by arrival number) with a 429 and `retryAfter`. */
const throttle = (pick: (n: number) => boolean, retryAfter: () => string): ProxyHooks => {
  let n = 0;
  return {
    intercept: (req) =>
      API(req.path) && pick(++n)
        ? {
            respond: {
              status: 429,
              headers: { 'retry-after': retryAfter() },
              body: '{"message":"Too Many Attempts."}',
            },
          }
        : undefined,
  };
};

const listPage = (c: PerksClient, page: number) => c.call('listUsers', { body: { page, per_page: 5 } });

describe('Retry-After is a floor', () => {
  test('a call queued behind the throttled one is not written before the Retry-After, though its slot frees at once', async () => {
    const wire: WireEvent[] = [];
    // One call in flight at a time, paced below a millisecond: the second call gets the first one's slot the
    // instant the 429 ends it, before the error reaches any code that could pause the credential.
    const c = client(wire, { maxConcurrent: 1 });
    await withHooks(
      proxy,
      throttle(
        (n) => n === 1,
        () => '1',
      ),
      async () => {
        await Promise.all([listPage(c, 1), listPage(c, 2), listPage(c, 3)]);
        const kept = retryAfterKept(proxy.log, wire);
        expect(kept).toMatchObject({ throttled: 1, earlyByClient: 0, earlyByServer: 0 });
        const first429 = proxy.log.find((e) => e.status === 429)!;
        const after = apiCalls(proxy.log).filter((e) => e.arrivedAt > first429.answeredAt);
        expect(after.length).toBe(3); // the retry and the two queued calls, all after the second
        for (const e of after) expect(e.arrivedAt - first429.answeredAt).toBeGreaterThanOrEqual(1000);
      },
    );
    await c.close();
  });

  test('under a burst of 8 calls in flight with a 429 every 10th call, no request is written or arrives before its Retry-After', async () => {
    const wire: WireEvent[] = [];
    const c = client(wire);
    await withHooks(
      proxy,
      throttle(
        (n) => n % 10 === 0,
        () => '1',
      ),
      async () => {
        const pages = Array.from({ length: 40 }, (_, i) => i + 1);
        const workers = Array.from({ length: 8 }, async (_, w) => {
          for (const p of pages.filter((x) => x % 8 === w)) await listPage(c, p);
        });
        await Promise.all(workers);
        const kept = retryAfterKept(proxy.log, wire);
        expect(kept.throttled).toBeGreaterThanOrEqual(4);
        expect(kept).toMatchObject({ earlyByClient: 0, earlyByServer: 0 });
      },
    );
    await c.close();
  }, 180_000);

  test('a Retry-After above the cap stops the throttled call and every waiting one unsent, at once', async () => {
    const wire: WireEvent[] = [];
    const c = client(wire, { maxConcurrent: 1 });
    await withHooks(
      proxy,
      throttle(
        (n) => n === 1,
        () => '86400',
      ),
      async () => {
        const started = performance.now();
        const results = await Promise.allSettled([listPage(c, 1), listPage(c, 2), listPage(c, 3)]);
        expect(performance.now() - started).toBeLessThan(10_000);
        for (const r of results) {
          expect(r.status).toBe('rejected');
          expect(String((r as PromiseRejectedResult).reason)).toMatch(
            /asks to wait 86400 s \(Retry-After\), above the 300 s cap/,
          );
        }
        expect(apiCalls(proxy.log)).toHaveLength(1);
      },
    );
    await c.close();
  });

  test("a Retry-After date is read against the answer's Date header too: a client clock ahead of the server's does not shorten it", () => {
    const server = Date.parse('2026-11-22T12:00:00Z');
    const date = new Date(server + 3000).toUTCString();
    const sent = new Date(server).toUTCString();
    // The client's clock runs 2 s ahead: by its own clock only 1 s would be left.
    expect(parseRetryAfter(date, server + 2000)).toBe(1000);
    expect(parseRetryAfter(date, server + 2000, sent)).toBe(3000);
    // Behind the server's, its own reckoning is the longer and wins.
    expect(parseRetryAfter(date, server - 2000, sent)).toBe(5000);
    expect(parseRetryAfter('2', server, sent)).toBe(2000);
    expect(parseRetryAfter('0.5', server)).toBe(500);
  });
});
