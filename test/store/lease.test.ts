/**
 * The store's lease, called directly, against a real S3-protocol server (s3rver, behind the front that
 * enforces If-None-Match / If-Match as S3 does) and a real Redis: one holder at a time, refusals that name
 * the holder and its true TTL, heartbeats that move heartbeat_at, a takeover at once only of a holder
 * certainly dead (this host, boot and PID namespace), a fence that sees a takeover. And a second perks
 * process in another PID namespace of this host (`unshare`, as containers sharing the host's name are)
 * that must not take a live holder's lease.
 *
 * The lease measures elapsed time on the real clock; no business date is read here.
 */
import { spawn, spawnSync } from 'node:child_process';
import { PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { redisClient, redisOptions } from '../../src/api/cluster.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { loadConfig } from '../../src/config/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { processIdentity } from '../../src/shared/process-identity.js';
import { StoreClient } from '../../src/store/client.js';
import { StoreLockedError } from '../../src/store/errors.js';
import { acquireLease, redisLeaseKey, type Lease, type LeaseHolder } from '../../src/store/lease.js';
import { probeConditionalWrites } from '../../src/store/probe.js';
import { parseStoreUrl } from '../../src/store/url.js';
import { baseEnv, PERKS, ROOT, type CliResult } from '../support/cli.js';
import { startConditionalFront, type ConditionalFront } from '../support/s3-conditional.js';
import { s3Client } from '../support/s3.js';
import { orgEnv, testSandbox } from '../support/sandbox.js';
import { messages, startStoreWorld, type S3rverWorld } from '../support/store-world.js';

type Kind = 'redis' | 'object';

let world: S3rverWorld;
let front: ConditionalFront;
let redis: Redis;
const s3 = () => s3Client(world.s3);
const leases: Lease[] = [];
let prefixes = 0;

/** The SDK reads credentials from this process's environment (its default chain), not from StoreClient's env. */
const CREDENTIALS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
const savedEnv = CREDENTIALS.map((k) => process.env[k]);

beforeAll(async () => {
  world = await startStoreWorld();
  for (const k of CREDENTIALS) process.env[k] = world.s3.env[k];
  front = await startConditionalFront(world.s3.endpoint);
  redis = new (redisClient())({ ...redisOptions(world.redis.url), maxRetriesPerRequest: 2 });
}, 180_000);
afterAll(async () => {
  for (const l of leases) await l.release().catch(() => undefined);
  redis?.disconnect();
  await front?.stop();
  await world?.stop();
  CREDENTIALS.forEach((k, i) => (savedEnv[i] === undefined ? delete process.env[k] : (process.env[k] = savedEnv[i])));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store of its own (a fresh prefix) for one kind of lease: the object lease goes through the conditional front. */
function store(kind: Kind) {
  const prefix = `lease-${kind}-${++prefixes}`;
  const env = { ...world.s3.env, ...(kind === 'object' ? { AWS_ENDPOINT_URL_S3: front.endpoint } : {}) };
  const client = new StoreClient(parseStoreUrl(`s3://${world.s3.bucket}/${prefix}`, 'test'), loadConfig(env));
  const acquire = async (command: string, options: { ttlMs?: number; onLost?: (m: string) => void } = {}) => {
    const lease = await acquireLease(client, command, {
      redisUrl: kind === 'redis' ? world.redis.url : undefined,
      conditionalWrites: () => probeConditionalWrites(client),
      ...options,
    });
    leases.push(lease);
    return lease;
  };
  const refusal = async (command: string, options: { ttlMs?: number } = {}) => {
    const error = await acquire(command, options).then(
      () => new Error('the lease was granted'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(StoreLockedError);
    expect((error as StoreLockedError).exitCode).toBe(ExitCode.locked);
    return error.message;
  };
  /** The holder record as the store or Redis has it now. */
  const read = async (): Promise<LeaseHolder | undefined> => {
    if (kind === 'redis') {
      const text = await redis.get(redisLeaseKey(client.where));
      return text === null ? undefined : (JSON.parse(text) as LeaseHolder);
    }
    const got = await s3()
      .send(new GetObjectCommand({ Bucket: world.s3.bucket, Key: `${prefix}/_perks/lease.json` }))
      .catch(() => undefined);
    return got ? (JSON.parse(await got.Body!.transformToString()) as LeaseHolder) : undefined;
  };
  /** Writes a holder record as another run would (Redis: with `ttlMs` as the key's own expiry). */
  const write = async (h: LeaseHolder) => {
    if (kind === 'redis') await redis.set(redisLeaseKey(client.where), JSON.stringify(h), 'PX', h.ttl_ms ?? 60_000);
    else
      await s3().send(
        new PutObjectCommand({
          Bucket: world.s3.bucket,
          Key: `${prefix}/_perks/lease.json`,
          Body: JSON.stringify(h),
        }),
      );
  };
  return { prefix, client, acquire, refusal, read, write };
}

/** A holder record of another run; this process's host, boot id and PID namespace unless `over` says otherwise. */
function other(over: Partial<LeaseHolder> = {}): LeaseHolder {
  const at = new Date().toISOString();
  const { host, boot_id, pid_ns } = processIdentity();
  return {
    token: 'another-run',
    host,
    boot_id,
    pid_ns,
    pid: 2 ** 22 + 17, // above Linux's pid_max default: no such process
    command: 'build',
    started_at: at,
    heartbeat_at: at,
    ttl_ms: 60_000,
    ...over,
  };
}

const BUSY =
  /^the store s3:\/\/\S+ (at \S+ )?is in use by another run \(`perks run` pid (\d+) on (\S+), started (\S+), last heartbeat (\S+)\); wait for it to finish \(it expires at (\S+) unless renewed; its lease lasts (.+) after its last heartbeat\)$/;

describe.each(['redis', 'object'] as const)('the store lease (%s)', (kind) => {
  test('a second acquire while it is held is refused (exit 5) naming the holder and the TTL it really has', async () => {
    const s = store(kind);
    const lease = await s.acquire('run');
    expect(lease.kind).toBe(kind);
    expect(lease.ttlMs).toBe(DEFAULTS.store.leaseSeconds * 1000);
    expect(lease.token).toMatch(/^[0-9a-f]{32}$/);
    const held = await s.read();
    expect(held).toMatchObject({ ...processIdentity(), token: lease.token, ttl_ms: lease.ttlMs });
    expect(held?.pid).toBe(process.pid);

    const message = await s.refusal('build');
    const m = BUSY.exec(message);
    expect(m, message).not.toBeNull();
    expect([m![2], m![3], m![4], m![5]]).toEqual([
      String(process.pid),
      held!.host,
      held!.started_at,
      held!.heartbeat_at,
    ]);
    expect(m![6]).toBe(new Date(Date.parse(held!.heartbeat_at) + lease.ttlMs).toISOString());
    expect(m![7]).toBe('2 min'); // DEFAULTS.store.leaseSeconds = 120
    expect(message).not.toContain('10 minutes');
    await lease.release();
    expect(await s.read()).toBeUndefined();

    // the holder's own TTL, whatever the newcomer's is
    const short = await s.acquire('run', { ttlMs: 90_000 });
    const shortMessage = await s.refusal('build', { ttlMs: 600_000 });
    expect(BUSY.exec(shortMessage)?.[7], shortMessage).toBe('90 s');
    await short.release();
  });

  test('each heartbeat moves heartbeat_at (every sixth of the TTL); release removes the lease', async () => {
    const s = store(kind);
    const lease = await s.acquire('run', { ttlMs: 1200 }); // a heartbeat every 200 ms
    const first = await s.read();
    await sleep(700);
    const second = await s.read();
    expect(second?.token).toBe(lease.token);
    expect(second?.started_at).toBe(first?.started_at);
    expect(Date.parse(second!.heartbeat_at)).toBeGreaterThan(Date.parse(first!.heartbeat_at));
    if (kind === 'redis') {
      const left = await redis.pttl(redisLeaseKey(s.client.where));
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(1200);
    }
    await sleep(1500); // longer than the TTL: the heartbeats kept it
    expect((await s.read())?.token).toBe(lease.token);
    lease.assertHeld();
    await lease.verify();
    await lease.release();
    expect(await s.read()).toBeUndefined();
  });

  test('a holder certainly dead (this host, boot and PID namespace, pid gone) is taken over at once', async () => {
    const s = store(kind);
    await s.write(other());
    const lease = await s.acquire('run');
    expect((await s.read())?.token).toBe(lease.token);
    await lease.release();
  });

  test('the same holder in another PID namespace is not taken over before its TTL, and is after it', async () => {
    const s = store(kind);
    await s.write(other({ pid_ns: 'pid:[1]', ttl_ms: 1500 }));
    const written = Date.now();
    const message = await s.refusal('run');
    expect(message).toMatch(
      /is in use by another run \(`perks build` pid 4194321 on .*its lease lasts 1\.5 s after its last heartbeat\)$/,
    );
    await sleep(written + 1700 - Date.now());
    const lease = await s.acquire('run');
    expect((await s.read())?.token).toBe(lease.token);
    await lease.release();

    // a record of an older version (host and pid only) is not judged by its pid either
    const { boot_id: _b, pid_ns: _p, ttl_ms: _t, ...old } = other();
    await s.write({ ...old, ttl_ms: kind === 'redis' ? 60_000 : undefined });
    await s.refusal('run');
  });

  test('verify() throws once another run took the lease over, and the heartbeat tells onLost once', async () => {
    const s = store(kind);
    const lost: string[] = [];
    const lease = await s.acquire('run', { ttlMs: 1200, onLost: (m) => lost.push(m) });
    await lease.verify();
    const thief = other({ host: 'elsewhere.example', pid: 4242, boot_id: 'b', pid_ns: 'pid:[2]' });
    await s.write(thief);
    for (let waited = 0; lost.length === 0 && waited < 3000; waited += 50) await sleep(50);
    await sleep(500); // more heartbeats would have run
    const expected = `its lease was taken over by another run (\`perks build\` pid 4242 on elsewhere.example, started ${thief.started_at}, last heartbeat ${thief.heartbeat_at}); nothing more of this command was committed`;
    expect(lost).toEqual([expect.stringMatching(/^the store s3:\/\//)]);
    expect(lost[0]).toContain(expected);
    expect(() => lease.assertHeld()).toThrow(StoreLockedError);
    await expect(lease.verify()).rejects.toThrow(expected);
    await lease.release();
    expect((await s.read())?.token).toBe('another-run'); // not removed by the loser

    // the fence before a commit sees a takeover before any heartbeat does
    const t = store(kind);
    const quiet: string[] = [];
    const slow = await t.acquire('run', { ttlMs: 60_000, onLost: (m) => quiet.push(m) });
    await t.write(thief);
    const error = await slow.verify().then(
      () => undefined,
      (e: unknown) => e as StoreLockedError,
    );
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error?.exitCode).toBe(ExitCode.locked);
    expect(error?.message).toContain(expected);
    expect(() => slow.assertHeld()).toThrow(expected);
    expect(quiet).toEqual([]);
    await slow.release();
    expect((await t.read())?.token).toBe('another-run');
  });
});

/** Whether this machine lets us start a process in a new PID namespace (root, unshare present). */
const unsharePermitted = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
/** Root must be able to: as root (CI is: README), a refused unshare fails the test instead of skipping it. */
const mustRun = process.getuid?.() === 0;

describe('a second run in another PID namespace of this host (a container sharing its name)', () => {
  test.skipIf(!unsharePermitted && !mustRun)(
    '`perks run` there is refused (exit 5), before any API call, while this process holds the lease: its pid is not judged there (skipped where `unshare --pid --fork --mount-proc` is missing or not permitted to a user other than root; as root, it fails)',
    async () => {
      expect(
        unsharePermitted,
        'running as root, `unshare --pid --fork --mount-proc true` failed: install util-linux and give the container CAP_SYS_ADMIN (docker run --privileged, or --cap-add SYS_ADMIN with seccomp and AppArmor allowing unshare): README, what a test runner needs',
      ).toBe(true);
      const s = store('redis');
      const lease = await s.acquire('run');
      const held = await s.read();
      const sandbox = await testSandbox({ seed: 3 });
      const env = baseEnv({
        ...orgEnv(sandbox, `s3://${world.s3.bucket}/${s.prefix}`),
        ...world.s3.env,
        PERKS_REDIS_URL: world.redis.url,
        PERKS_CACHE_DIR: world.machine(),
      });
      const started = Date.now();
      const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, PERKS, 'run'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += String(d)));
      child.stderr.on('data', (d) => (stderr += String(d)));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      const result = await new Promise<CliResult>((done) =>
        child.once('close', (code, signal) => done({ code, signal, stdout, stderr, ms: Date.now() - started })),
      );
      clearTimeout(timer);
      expect(sandbox.stats().calls, 'refused before any API call').toBe(0);
      await sandbox.close();
      expect(result.code, result.stderr).toBe(5);
      const lines = messages(result);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^perks: the store /); // how the command line prints a StoreLockedError
      expect(lines[0].slice('perks: '.length)).toMatch(BUSY);
      expect(lines[0]).toContain(
        `(\`perks run\` pid ${process.pid} on ${held!.host}, started ${held!.started_at}, last heartbeat `,
      );
      expect((await s.read())?.token).toBe(lease.token);
      lease.assertHeld();
      await lease.verify();
      await lease.release();
    },
  );
});

describe('a run whose lease is taken over while it runs', () => {
  test('stops at once (within a heartbeat: a sixth of the TTL) with one line, exit 5, and commits nothing more', async () => {
    const sandbox = await testSandbox({ seed: 4 });
    const prefix = `lease-taken-${++prefixes}`;
    const env = baseEnv({
      ...orgEnv(sandbox, `s3://${world.s3.bucket}/${prefix}`),
      ...world.s3.env,
      PERKS_REDIS_URL: world.redis.url,
      PERKS_CACHE_DIR: world.machine(),
      PERKS_RATE_LIMIT: '300', // paced: the extract lasts about two minutes
      PERKS_STORE_LEASE_SECONDS: '12', // a heartbeat every 2 s
      PERKS_STORE_CHECKPOINT_SECONDS: '1',
    });
    const child = spawn(process.execPath, [PERKS, 'extract'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const ended = new Promise<{ code: number | null }>((done) => child.once('close', (code) => done({ code })));
    const client = new StoreClient(
      parseStoreUrl(`s3://${world.s3.bucket}/${prefix}`, 'test'),
      loadConfig(world.s3.env),
    );
    const key = redisLeaseKey(client.where);
    // the index alone, read while the run publishes (world.index reads every object, some removed meanwhile)
    const generation = async () => {
      const got = await client.get('_perks/index.json');
      return got ? (JSON.parse(got.body.toString('utf8')) as { generation: number }).generation : undefined;
    };
    while (!(await redis.get(key)) || (await generation()) === undefined) await sleep(100);
    const other = { ...JSON.parse((await redis.get(key))!), token: 'another-run', pid: 1 };
    await redis.set(key, JSON.stringify(other), 'PX', 60_000);
    const taken = Date.now();
    const committed = await generation();
    const result = await Promise.race([ended, sleep(30_000).then(() => ({ code: -1 }))]);
    child.kill('SIGKILL');
    await sandbox.close();
    const after = await generation();
    client.destroy();
    expect(result.code, stderr).toBe(5);
    expect(Date.now() - taken).toBeLessThan(12_000);
    expect(messages({ code: 5, signal: null, stdout: '', stderr, ms: 0 })).toEqual([
      expect.stringMatching(
        /^perks: the store .*: its lease was taken over by another run .*nothing more of this command was committed/,
      ),
    ]);
    // at most the checkpoint in flight at the takeover, committed before the fence read it
    expect(after ?? 0).toBeLessThanOrEqual((committed ?? 0) + 1);
  }, 120_000);
});
