/**
 * 5. Fault storms: every stream extracted through the sandbox's faults (5xx, hangs, cut bodies, revoked
 * tokens) and a proxy's (connection resets, 429s with each form of Retry-After, a lower server limit).
 * Each run must complete with exactly the data of a run without faults, send nothing before a
 * Retry-After, and fail fast with a clear message when the API asks for an absurd wait.
 */
import { clusterKey, PerksClient, type ClientOptions, type WireEvent } from '../../../src/api/index.js';
import { extract, type ExtractResult } from '../../../src/extract/index.js';
import { maxCallsInWindow, type Faults, type Sandbox } from '../../../src/sandbox/index.js';
import { completeness, groupsAt, lakeKeys, type Keys } from '../../support/lake-check.js';
import {
  apiCalls,
  retryAfterKept,
  startProxy,
  type LogEntry,
  type ProxyHooks,
  type WorkerEvent,
} from '../../support/proxy.js';
import { startRedis } from '../../support/redis.js';
import { seeded } from '../../support/random.js';
import { orgConfig, withSandbox } from '../../support/sandbox.js';
import { withScratch, type Scratch } from '../../support/scratch.js';
import { wallClock } from '../../support/wall-clock.js';
import { row, selectByName, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const NOW = new Date(`${TODAY}T12:00:00Z`);

export interface Storm {
  name: string;
  faults?: Partial<Faults>;
  /** Hooks of a proxy between the client and the sandbox (made per run; `random` is seeded). */
  proxy?: (random: () => number) => ProxyHooks;
  client?: Partial<ClientOptions>;
  /** Limit of the sandbox itself (calls per minute) for this storm. */
  serverLimit?: number;
  /** Streams to extract (all when absent). */
  streams?: ('orders' | 'users')[];
  /** The run must fail within this many ms with a message matching `message`, instead of completing. */
  failFast?: { withinMs: number; message: RegExp; maxTokenRequests?: number };
}

const API = (path: string) => !path.startsWith('/v3/oauth/token');

/** A proxy hook answering every `every`-th API call with a 429 carrying `retryAfter` (a function of now). */
function throttleEvery(every: number, retryAfter: () => string | undefined): () => ProxyHooks {
  let calls = 0;
  return () => ({
    intercept: (req) => {
      if (!API(req.path) || ++calls % every !== 0) return undefined;
      const ra = retryAfter();
      const headers: Record<string, string> = ra === undefined ? {} : { 'retry-after': ra };
      return { respond: { status: 429, headers, body: '{"message":"Too Many Attempts."}' } };
    },
  });
}

export const STORMS: Record<string, Storm> = {
  errors5: { name: '5% of calls 5xx', faults: { errorRate: 0.05 } },
  errors20: { name: '20% of calls 5xx', faults: { errorRate: 0.2 } },
  resets: {
    name: '5% of connections reset',
    proxy: (random) => ({ intercept: (req) => (API(req.path) && random() < 0.05 ? { reset: true } : undefined) }),
  },
  hangs: { name: '3% of calls hang (timeout 0.5 s)', faults: { hangRate: 0.03 }, client: { timeoutMs: 500 } },
  cut: { name: '10% of bodies cut mid-way', faults: { truncateRate: 0.1 } },
  retryAfterSeconds: { name: '429 with Retry-After: 1 (every 40th call)', proxy: throttleEvery(40, () => '1') },
  retryAfterPaced: {
    name: '429 with Retry-After: 1 at a paced 1000/min (every 40th)',
    proxy: throttleEvery(40, () => '1'),
    client: { rateLimit: 1000 },
    streams: ['orders'],
  },
  retryAfterDate: {
    name: '429 with Retry-After as a date (every 60th)',
    proxy: throttleEvery(60, () => wallClock(2000).toUTCString()),
  },
  retryAfterMissing: { name: '429 without Retry-After (every 40th)', proxy: throttleEvery(40, () => undefined) },
  retryAfterAbsurd: {
    name: '429 with Retry-After: 86400 → fails fast',
    proxy: throttleEvery(10, () => '86400'),
    failFast: { withinMs: 10_000, message: /Retry-After.*cap/ },
  },
  tokenDown: {
    name: 'token endpoint answering 500 → stops after its own retries',
    proxy: () => ({
      intercept: (req) =>
        API(req.path) ? undefined : { respond: { status: 500, body: '{"message":"Server Error"}' } },
    }),
    failFast: { withinMs: 30_000, message: /token: HTTP 500/, maxTokenRequests: 9 },
  },
  revoke25: {
    name: 'token revoked every 25 calls, calls in flight',
    faults: { revokeTokenEvery: 25, latencyMs: 30 },
    proxy: () => ({}),
  },
  revoke5: {
    name: 'token revoked every 5 calls, 8 in flight',
    faults: { revokeTokenEvery: 5, latencyMs: 30 },
    proxy: () => ({}),
  },
  everything: {
    name: '5xx, hangs, cut bodies, resets and revocations at once',
    faults: { errorRate: 0.05, hangRate: 0.02, truncateRate: 0.05, revokeTokenEvery: 60 },
    client: { timeoutMs: 500 },
    proxy: (random) => ({ intercept: (req) => (API(req.path) && random() < 0.03 ? { reset: true } : undefined) }),
  },
  lowerLimit: {
    name: 'server limit 60/min under a configured 1000/min (no rate headers)',
    serverLimit: 60,
    streams: ['orders'],
    client: { rateLimit: 1000 },
    proxy: () => ({
      rewriteResponse: (_req, a) => ({
        ...a,
        headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => !k.startsWith('x-ratelimit'))),
      }),
    }),
  },
};

export async function faultStorms(o: ScenarioOptions & { storms: string[]; days: number }): Promise<Row[]> {
  const storms = selectByName('fault storm', Object.keys(STORMS), (k) => k, o.storms);
  const start = shiftDays(TODAY, -o.days);
  return withSandbox({ seed: 31, today: TODAY }, (sandbox) =>
    withScratch('faults', async (scratch) => {
      // The reference: the same extract without any fault.
      const refDir = scratch.dir('reference');
      await extract(orgConfig(sandbox, refDir, { PERKS_START_DATE: start }), { output: outputAt(refDir), now: NOW });
      const reference = await lakeKeys(refDir);
      const rows: Row[] = [];
      for (const key of storms) {
        const storm = STORMS[key];
        o.log(`faults: ${storm.name}`);
        // The sandbox's own limit is fixed when it starts: a lower one needs a sandbox of its own (same seed, same data).
        rows.push(
          storm.serverLimit
            ? await withSandbox({ seed: 31, today: TODAY, rateLimit: storm.serverLimit }, (limited) =>
                runStorm(limited, scratch, storm, start, reference, seeded(o.seed)),
              )
            : await runStorm(sandbox, scratch, storm, start, reference, seeded(o.seed)),
        );
      }
      return rows;
    }),
  );
}

async function runStorm(
  sandbox: Sandbox,
  scratch: Scratch,
  storm: Storm,
  start: string,
  reference: Keys,
  random: () => number,
): Promise<Row> {
  const out = scratch.dir();
  const proxy = storm.proxy ? await startProxy(sandbox.baseUrl, storm.proxy(random)) : undefined;
  const org = sandbox.credentials.organisation;
  const wire: WireEvent[] = [];
  const client = new PerksClient({
    baseUrl: proxy?.url ?? sandbox.baseUrl,
    clientId: org.client_id,
    clientSecret: org.client_secret,
    organisationLevel: true,
    rateLimit: 100_000,
    minRetryDelayMs: 20,
    onWire: (e) => wire.push(e),
    ...storm.client,
  });
  sandbox.setFaults(storm.faults ?? {});
  const before = sandbox.stats();
  const started = performance.now();
  let result: (ExtractResult & { manifest: string }) | undefined;
  let thrown: Error | undefined;
  try {
    result = await extract(orgConfig(sandbox, out, { PERKS_START_DATE: start }), {
      output: outputAt(out),
      client,
      now: NOW,
      streams: storm.streams,
    });
  } catch (err) {
    thrown = err as Error;
  } finally {
    sandbox.setFaults({ errorRate: 0, hangRate: 0, truncateRate: 0, revokeTokenEvery: 0, latencyMs: 0 });
    await client.close();
    await proxy?.close();
  }
  const ms = performance.now() - started;
  const after = sandbox.stats();
  const problems: string[] = [];
  const log = proxy?.log ?? [];
  const figures: string[] = [];

  if (storm.failFast) {
    const message = thrown?.message ?? result?.streams.find((s) => s.error)?.error ?? '';
    if (result?.status === 'success') problems.push('the run completed instead of stopping');
    if (ms > storm.failFast.withinMs) problems.push(`stopped after ${ms} ms`);
    if (!storm.failFast.message.test(message)) problems.push(`message: ${message || '(none)'}`);
    const tokens = log.filter((e) => !API(e.path)).length;
    if (storm.failFast.maxTokenRequests !== undefined && tokens > storm.failFast.maxTokenRequests)
      problems.push(`${tokens} token requests (at most ${storm.failFast.maxTokenRequests})`);
    const asked = storm.failFast.maxTokenRequests !== undefined ? `, ${tokens} token requests` : '';
    return row(
      storm.name,
      1,
      problems,
      `stopped after ${(ms / 1000).toFixed(1)} s${asked}: "${message.slice(0, 110)}"`,
    );
  }

  if (thrown || result?.status !== 'success')
    problems.push(`the run did not complete: ${thrown?.message ?? result?.streams.find((s) => s.error)?.error}`);
  const complete = await completeness(
    sandbox,
    out,
    groupsAt(sandbox, NOW),
    start,
    onlyStreams(reference, storm.streams),
  );
  if (complete.problem) problems.push(complete.problem);
  figures.push(`missing ${complete.missing}, duplicated ${complete.duplicated}`);

  const faults = after.faults;
  const injected =
    faults.errors -
    before.faults.errors +
    faults.hangs -
    before.faults.hangs +
    faults.truncations -
    before.faults.truncations;
  const resets = log.filter((e) => e.status === 'reset').length;
  const throttled = apiCalls(log).filter((e) => e.status === 429).length + (after.throttled - before.throttled);
  if (injected + resets) figures.push(`${injected + resets} faults survived`);
  if (throttled) {
    const kept = retryAfterKept(log, wire);
    if (kept.earlyByClient)
      problems.push(`${kept.earlyByClient} requests written after a 429 arrived and before its Retry-After`);
    if (kept.earlyByServer)
      problems.push(`${kept.earlyByServer} requests reached the server before a 429's Retry-After had passed`);
    figures.push(
      `${throttled}×429, ${kept.earlyByClient} sent before Retry-After by the client's clock, ${kept.earlyByServer} by the server's (${kept.onTheWire} already on the wire)`,
    );
  }
  const revocations = faults.revocations - before.faults.revocations;
  if (revocations) {
    const tokens = after.tokenRequests - before.tokenRequests;
    // One token request per revocation, plus the first (none is needed when the last token is revoked by the last call).
    if (tokens > revocations + 1)
      problems.push(`${tokens} token requests for ${revocations} revocations (goal: at most one each, plus the first)`);
    figures.push(
      `${revocations} revocations → ${tokens} token requests, up to ${maxInFlightAt401(log)} calls in flight at a 401`,
    );
  }
  if (storm.serverLimit) {
    const peak = maxCallsInWindow(after.callTimes[String(sandbox.credentials.organisation.client_id)] ?? []);
    figures.push(`peak ${peak} calls in 60 s at the sandbox`);
  }
  figures.push(`${(ms / 1000).toFixed(1)} s`);
  return row(storm.name, 1, problems, figures.join(', '));
}

/** Most calls in flight at the moment a 401 was answered. */
function maxInFlightAt401(log: LogEntry[]): number {
  let most = 0;
  for (const e of log) {
    if (e.status !== 401) continue;
    most = Math.max(
      most,
      log.filter((c) => API(c.path) && c.arrivedAt <= e.answeredAt && c.answeredAt >= e.answeredAt).length,
    );
  }
  return most;
}

function onlyStreams(reference: Keys, streams?: string[]): Keys {
  if (!streams) return reference;
  return new Map([...reference].filter(([s]) => streams.includes(s)));
}

function shiftDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** 4xx answers other than 401 and 429 are the client's own fault: sent once, never retried. */
export async function notRetried(): Promise<Row> {
  const statuses = [400, 403, 404, 405, 409, 410, 413, 422];
  return withSandbox({ seed: 31, today: TODAY }, async (sandbox) => {
    const problems: string[] = [];
    let answer = 0;
    const proxy = await startProxy(sandbox.baseUrl, {
      intercept: (req) =>
        API(req.path) ? { respond: { status: answer, body: '{"message":"refused by the test proxy"}' } } : undefined,
    });
    const org = sandbox.credentials.organisation;
    const client = new PerksClient({
      baseUrl: proxy.url,
      clientId: org.client_id,
      clientSecret: org.client_secret,
      organisationLevel: true,
      rateLimit: 100_000,
      minRetryDelayMs: 20,
    });
    try {
      for (const status of statuses) {
        answer = status;
        const before = apiCalls(proxy.log).length;
        const err = await client
          .call('listOrders', { group: org.organisation_group_ids[0], body: { page: 1, per_page: 10 } })
          .then(
            () => undefined,
            (e: unknown) => e as Error,
          );
        const sent = apiCalls(proxy.log).length - before;
        if (!err) problems.push(`${status}: the call succeeded`);
        if (sent !== 1) problems.push(`${status}: sent ${sent} times`);
      }
    } finally {
      await client.close();
      await proxy.close();
    }
    return row(
      '4xx other than 401/429 are not retried',
      statuses.length,
      problems,
      `${statuses.join(', ')}: ${statuses.length - problems.length}/${statuses.length} sent once and failed`,
    );
  });
}

/**
 * Two workers of one credential sharing its limit through Redis (PERKS_REDIS_URL), each extracting half
 * the groups, through a proxy answering every 15th API call with a 429 and Retry-After: 1. Neither writes a
 * request after it knows of the pause (the worker that read the 429 at once, the other once the pause is
 * in Redis) before the Retry-After ends, by the clients' clock and by the server's.
 */
export async function sharedRetryAfter(o: ScenarioOptions & { days: number }): Promise<Row> {
  const redis = await startRedis();
  try {
    return await withSandbox({ seed: 31, today: TODAY }, (sandbox) =>
      withScratch('faults-shared', async (scratch) => {
        const start = shiftDays(TODAY, -o.days);
        const proxy = await startProxy(sandbox.baseUrl, throttleEvery(15, () => '1')());
        const org = sandbox.credentials.organisation;
        const wire: WorkerEvent[] = [];
        const groups = org.organisation_group_ids;
        const halves = [groups.slice(0, groups.length / 2), groups.slice(groups.length / 2)];
        const started = performance.now();
        const problems: string[] = [];
        try {
          const results = await Promise.all(
            halves.map(async (mine, i) => {
              const client = new PerksClient({
                baseUrl: proxy.url,
                clientId: org.client_id,
                clientSecret: org.client_secret,
                organisationLevel: true,
                rateLimit: 100_000,
                minRetryDelayMs: 20,
                cluster: { redisUrl: redis.url, key: clusterKey(proxy.url, org.client_id) },
                onWire: (e) => wire.push({ ...e, worker: `w${i}` }),
              });
              const out = scratch.dir(`w${i}`);
              try {
                return await extract(
                  orgConfig(sandbox, out, {
                    PERKS_START_DATE: start,
                    PERKS_GROUP_IDS: mine.join(','),
                  }),
                  { output: outputAt(out), client, now: NOW, streams: ['orders'] },
                );
              } finally {
                await client.close();
              }
            }),
          );
          for (const r of results) if (r.status !== 'success') problems.push(`a worker's extract ended ${r.status}`);
        } finally {
          await proxy.close();
        }
        const kept = retryAfterKept(proxy.log, wire);
        if (!kept.throttled) problems.push('no 429 was answered');
        if (kept.earlyByClient)
          problems.push(`${kept.earlyByClient} requests written after the pause was known and before its Retry-After`);
        if (kept.earlyByServer)
          problems.push(`${kept.earlyByServer} requests reached the server before a 429's Retry-After had passed`);
        return row(
          '429 with Retry-After: 1 (every 15th call), two workers sharing the limit through Redis',
          2,
          problems,
          `${kept.throttled}×429, ${kept.earlyByClient} sent before Retry-After by the clients' clock, ${kept.earlyByServer} by the server's (${kept.onTheWire} already on the wire or not yet in Redis), ${apiCalls(proxy.log).length} calls, ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }),
    );
  } finally {
    await redis.stop();
  }
}
