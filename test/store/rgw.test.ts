/**
 * Issue 50: the store on a real S3 server that enforces conditional writes, Ceph's RADOS Gateway
 * (test/support/rgw.ts), with no Redis: the lease lives in the store itself. RGW 16 answers 412 to `If-Match`
 * with the ETag in quotes, as the SDK returns it, and takes it bare: the probe learns the form, the lease's
 * heartbeats land, the commits go through. Besides: `perks store check` on each server, a lease whose
 * renewals fail stopping the command loudly, and a commit refused for what it is, never "another machine".
 *
 * The lease measures elapsed time on the real clock; no business date is read here.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { StoreClient } from '../../src/store/client.js';
import { StoreError, StoreLockedError } from '../../src/store/errors.js';
import { acquireLease, type Lease, type LeaseHolder } from '../../src/store/lease.js';
import { probeConditionalWrites } from '../../src/store/probe.js';
import { parseStoreUrl } from '../../src/store/url.js';
import { baseEnv, runCli, type CliResult } from '../support/cli.js';
import { perksInOtherPidNamespace } from '../support/pid-namespace.js';
import { rgwClient } from '../support/rgw.js';
import { startConditionalFront } from '../support/s3-conditional.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { testSandbox } from '../support/sandbox.js';
import { messages, startStoreWorld, type StoreWorld } from '../support/store-world.js';

let rgw: StoreWorld;
let s3rver: TestS3;
let redis: TestRedis;
const leases: Lease[] = [];
let prefixes = 0;

/** The SDK reads credentials from this process's environment (its default chain), not from StoreClient's env. */
const CREDENTIALS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
const savedEnv = CREDENTIALS.map((k) => process.env[k]);
const useCredentials = (s3: TestS3) => {
  for (const k of CREDENTIALS) process.env[k] = s3.env[k];
};

beforeAll(async () => {
  [rgw, s3rver, redis] = await Promise.all([startStoreWorld('rgw'), startS3(), startRedis()]);
  useCredentials(rgw.s3);
}, 180_000);
afterAll(async () => {
  for (const l of leases) await l.release().catch(() => undefined);
  await redis?.stop();
  await s3rver?.stop();
  await rgw?.stop();
  CREDENTIALS.forEach((k, i) => (savedEnv[i] === undefined ? delete process.env[k] : (process.env[k] = savedEnv[i])));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client of a fresh prefix of `s3`'s bucket (at `endpoint`: a front before it, or the server itself). */
function clientOf(s3: TestS3, endpoint = s3.endpoint) {
  const prefix = `rgw-${++prefixes}`;
  const client = new StoreClient(
    parseStoreUrl(`s3://${s3.bucket}/${prefix}`, 'test'),
    loadConfig({ ...s3.env, AWS_ENDPOINT_URL_S3: endpoint }),
  );
  return { prefix, client };
}

/** A lease in the store itself (no Redis), its service probed first as a command does. */
async function acquire(client: StoreClient, options: { ttlMs?: number; onLost?: (m: string) => void } = {}) {
  const found = await probeConditionalWrites(client);
  if (found.ifMatch === 'quoted' || found.ifMatch === 'unquoted') client.ifMatchForm = found.ifMatch;
  const lease = await acquireLease(client, 'run', { conditionalWrites: () => Promise.resolve(found), ...options });
  leases.push(lease);
  return lease;
}

async function leaseOn(prefix: string): Promise<LeaseHolder | undefined> {
  const s3 = rgwClient(rgw.s3.endpoint);
  try {
    const got = await s3.send(new GetObjectCommand({ Bucket: rgw.s3.bucket, Key: `${prefix}/_perks/lease.json` }));
    return JSON.parse(await got.Body!.transformToString()) as LeaseHolder;
  } catch {
    return undefined;
  } finally {
    s3.destroy();
  }
}

describe('what a server does with conditional writes, found out before any work', () => {
  test('RGW enforces both and takes If-Match bare; s3rver enforces neither; a front that enforces them as S3 does takes it quoted', async () => {
    expect(await probeConditionalWrites(clientOf(rgw.s3).client)).toEqual({ ifNoneMatch: true, ifMatch: 'unquoted' });
    useCredentials(s3rver);
    const front = await startConditionalFront(s3rver.endpoint);
    try {
      expect(await probeConditionalWrites(clientOf(s3rver).client)).toEqual({ ifNoneMatch: false, ifMatch: 'ignored' });
      expect(await probeConditionalWrites(clientOf(s3rver, front.endpoint).client)).toEqual({
        ifNoneMatch: true,
        ifMatch: 'quoted',
      });
    } finally {
      await front.stop();
      useCredentials(rgw.s3);
    }
  });

  test('perks store check: exit 0 on RGW (the lease in the store); exit 2 on s3rver naming what it does not do; exit 0 there with Redis', async () => {
    const check = (s3: TestS3, prefix: string, extra: Record<string, string> = {}) =>
      runCli(['store', 'check'], baseEnv({ ...s3.env, PERKS_OUTPUT: `s3://${s3.bucket}/${prefix}`, ...extra }));
    const onRgw = await check(rgw.s3, 'check');
    expect(onRgw.code, onRgw.stderr).toBe(0);
    expect(onRgw.stdout).toContain(
      'ok   If-Match: the ETag taken only without its quotes (as Ceph RGW 16 does; perks sends it so)',
    );
    expect(onRgw.stdout).toContain('ok   lease: the lease lives in the store itself (conditional writes enforced)');
    expect(onRgw.stdout).toContain('ok   CopyObject: a copy within the bucket has the same bytes');
    expect(onRgw.stdout.split('\n').at(-2)).toBe('usable: every perks command can write this store as configured');

    const bare = await check(s3rver, 'check');
    expect(bare.code).toBe(ExitCode.config);
    expect(bare.stdout).toContain('FAIL If-None-Match: *: a second create of one object was taken (not enforced)');
    expect(bare.stdout).toContain('FAIL If-Match: not enforced (a stale ETag was taken)');
    expect(bare.stdout).toMatch(/FAIL lease: no lease possible: .* set PERKS_REDIS_URL/);
    const withRedis = await check(s3rver, 'check', { PERKS_REDIS_URL: redis.url });
    expect(withRedis.code, withRedis.stdout).toBe(0);
    expect(withRedis.stdout).toContain('ok   lease: the lease lives in Redis (PERKS_REDIS_URL)');
    for (const r of [onRgw, bare, withRedis]) expect(r.stdout + r.stderr).not.toContain(redis.password);
    // the scratch objects are gone: the prefix is as empty as before
    const left = await clientOf(rgw.s3).client.list('', 10);
    expect(left).toEqual([]);
  });
});

describe('the lease in the store itself, on RGW (no Redis)', () => {
  test('8 writers at once: exactly one holds it, the 7 others are refused (exit 5) naming it', async () => {
    const { prefix } = clientOf(rgw.s3);
    const clients = Array.from(
      { length: 8 },
      () => new StoreClient(parseStoreUrl(`s3://${rgw.s3.bucket}/${prefix}`, 'test'), loadConfig(rgw.s3.env)),
    );
    const outcomes = await Promise.allSettled(clients.map((c) => acquire(c)));
    const won = outcomes.filter((o): o is PromiseFulfilledResult<Lease> => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const e of lost) {
      expect(e).toBeInstanceOf(StoreLockedError);
      expect((e as StoreLockedError).exitCode).toBe(ExitCode.locked);
    }
    expect((await leaseOn(prefix))?.token).toBe(won[0].value.token);
    await won[0].value.release();
    expect(await leaseOn(prefix)).toBeUndefined();
  });

  test('each heartbeat lands (heartbeat_at moves past the TTL); a holder in another PID namespace is taken over only after its TTL', async () => {
    const { prefix, client } = clientOf(rgw.s3);
    const lease = await acquire(client, { ttlMs: 1200 }); // a heartbeat every 200 ms
    const first = await leaseOn(prefix);
    await sleep(1500); // longer than the TTL: only renewals keep it
    const later = await leaseOn(prefix);
    expect(later?.token).toBe(lease.token);
    expect(Date.parse(later!.heartbeat_at)).toBeGreaterThan(Date.parse(first!.heartbeat_at));
    lease.assertHeld();
    await lease.verify();
    await lease.release();

    // another namespace's holder, not renewing: refused until its TTL has passed, then taken over
    const at = new Date().toISOString();
    const other: LeaseHolder = {
      ...later!,
      token: 'another-run',
      pid_ns: 'pid:[1]',
      pid: 4242,
      started_at: at,
      heartbeat_at: at,
      ttl_ms: 1500,
    };
    const s3 = rgwClient(rgw.s3.endpoint);
    await s3.send(
      new PutObjectCommand({ Bucket: rgw.s3.bucket, Key: `${prefix}/_perks/lease.json`, Body: JSON.stringify(other) }),
    );
    s3.destroy();
    const written = Date.now();
    await expect(acquire(client)).rejects.toThrow(/is in use by another run .*its lease lasts 1\.5 s/);
    await sleep(written + 1700 - Date.now());
    const taken = await acquire(client);
    expect((await leaseOn(prefix))?.token).toBe(taken.token);
    await taken.release();
  });

  test('a run whose lease was taken over commits nothing more: its heartbeat says so once, verify() refuses', async () => {
    const { prefix, client } = clientOf(rgw.s3);
    const lost: string[] = [];
    const lease = await acquire(client, { ttlMs: 1200, onLost: (m) => lost.push(m) });
    const thief = { ...(await leaseOn(prefix))!, token: 'another-run', host: 'elsewhere.example', pid: 4242 };
    const s3 = rgwClient(rgw.s3.endpoint);
    await s3.send(
      new PutObjectCommand({ Bucket: rgw.s3.bucket, Key: `${prefix}/_perks/lease.json`, Body: JSON.stringify(thief) }),
    );
    s3.destroy();
    for (let waited = 0; lost.length === 0 && waited < 3000; waited += 50) await sleep(50);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toContain('its lease was taken over by another run (`perks run` pid 4242 on elsewhere.example');
    expect(() => lease.assertHeld()).toThrow(StoreLockedError);
    await expect(lease.verify()).rejects.toThrow(StoreLockedError);
    await lease.release();
    expect((await leaseOn(prefix))?.token).toBe('another-run');
  });
});

test('a lease whose renewals the service refuses stops the command at its next publish, saying the answer (exit 1), not "another machine"', async () => {
  // RGW's answer to a quoted ETag, given by a front to every renewal: the lease stays ours, no heartbeat lands
  useCredentials(s3rver);
  const front = await startConditionalFront(s3rver.endpoint, (req) =>
    req.method === 'PUT' && req.headers['if-match'] && req.url?.includes('/_perks/lease.json')
      ? {
          status: 412,
          code: 'PreconditionFailed',
          message: 'At least one of the pre-conditions you specified did not hold',
        }
      : undefined,
  );
  try {
    const { client } = clientOf(s3rver, front.endpoint);
    const lost: string[] = [];
    const lease = await acquire(client, { ttlMs: 600, onLost: (m) => lost.push(m) }); // a renewal every 100 ms
    lease.assertHeld();
    let error: unknown;
    for (let waited = 0; error === undefined && waited < 5000; waited += 50) {
      await sleep(50);
      try {
        lease.assertHeld();
      } catch (err) {
        error = err;
      }
    }
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(StoreLockedError);
    expect((error as StoreError).exitCode).toBe(ExitCode.failed);
    const message = (error as StoreError).message;
    expect(message).toMatch(
      /^the store s3:\/\/\S+ at \S+: its lease could not be renewed 2 times in a row \(the last answer: HTTP 412 PreconditionFailed to If-Match on the lease's own current ETag/,
    );
    expect(message).toContain('nothing more of it was committed; a rerun is safe');
    expect(message).not.toContain('another machine');
    expect(lost, 'the lease was not taken: it is not reported lost').toEqual([]);
    await expect(lease.verify()).rejects.toThrow(message);
    await lease.release();
  } finally {
    await front.stop();
    useCredentials(rgw.s3);
  }
});

test('perks run on RGW with no Redis: exit 0, its lease renewed all along; a second run in another PID namespace refused (exit 5) while it lives; a fresh copy answers the same SQL', async () => {
  const sandbox = await testSandbox({ seed: 50 });
  try {
    const prefix = 'rgw-run';
    const first = rgw.machine();
    const env = (machine: string) =>
      rgw.env(sandbox, prefix, machine, { PERKS_STORE_LEASE_SECONDS: '12', PERKS_STORE_CHECKPOINT_SECONDS: '2' });
    const running = rgw.start(['run', '--no-writeback'], env(first));
    const beats = new Set<string>();
    let second: CliResult | undefined;
    while (running.child.exitCode === null) {
      const held = await leaseOn(prefix);
      if (held) beats.add(held.heartbeat_at);
      if (held && !second) second = await perksInOtherPidNamespace(['run', '--no-writeback'], env(rgw.machine()));
      await sleep(250);
    }
    const result = await running.done;
    expect(result.code, result.stderr.slice(-800)).toBe(0);
    expect(second?.code, second?.stderr).toBe(ExitCode.locked);
    expect(messages(second!)).toEqual([
      expect.stringMatching(/^perks: the store s3:\/\/\S+ at \S+ is in use by another run \(`perks run` pid \d+ on /),
    ]);
    // a heartbeat every 2 s over the run: several distinct heartbeat_at seen, the lease gone after it
    expect(beats.size, `run of ${result.ms} ms`).toBeGreaterThanOrEqual(Math.min(3, Math.floor(result.ms / 2000)));
    expect(await leaseOn(prefix)).toBeUndefined();

    const query = [
      'sql',
      'SELECT organisation_group_id, month, order_currency, sum(group_revenue) AS revenue FROM revenue_monthly WHERE is_recognised GROUP BY ALL ORDER BY ALL',
      '--format',
      'csv',
    ];
    const here = await rgw.perks(query, env(first));
    const fresh = await rgw.perks(query, env(rgw.machine()));
    expect(here.code, here.stderr).toBe(0);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(here.stdout.split('\n').length).toBeGreaterThan(3);
    expect(fresh.stdout).toBe(here.stdout);
  } finally {
    await sandbox.close();
  }
}, 300_000);
