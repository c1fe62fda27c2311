/**
 * One writer per store, across machines: the lease. A command that changes the store (run, extract,
 * build, close, writeback…) holds it from before it reads the store until its last publish.
 *
 * - With PERKS_REDIS_URL: a Redis key (`SET NX PX`), renewed every 20 s for 2 minutes, released only by
 *   its holder (compare and delete). Works with any S3-compatible service.
 * - Otherwise: the object `_perks/lease.json`, created with `If-None-Match: *` (only if absent), renewed
 *   with `If-Match: <its ETag>`, taken over when stale with `If-Match` on the stale version. This needs
 *   a service that enforces conditional writes (AWS S3 since 2024, MinIO, Cloudflare R2…): each
 *   command first checks it (`probeConditionalWrites`), and refuses to write (exit 2) where they are
 *   ignored and no Redis is set, rather than let two machines both believe they hold the store.
 *
 * A lease is stale when its heartbeat is older than 10 minutes (another machine died), or at once when
 * its holder is a dead process on this same host (killed, then rerun).
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { describeRedisUrl, redisClient, redisOptions } from '../api/cluster.js';
import { pidAlive } from '../lake/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { StoreClient } from './client.js';
import { PreconditionFailed, StoreError, StoreLockedError } from './errors.js';
import { LEASE, META } from './layout.js';

export interface LeaseHolder {
  token: string;
  host: string;
  pid: number;
  command: string;
  started_at: string;
  heartbeat_at: string;
}

export interface Lease {
  readonly kind: 'redis' | 'object';
  /** Throws when the lease was lost (taken over as stale, Redis gone): nothing more may be committed. */
  assertHeld(): void;
  release(): Promise<void>;
}

const STALE_MS = 10 * 60_000;
const OBJECT_HEARTBEAT_MS = 30_000;
const REDIS_TTL_MS = 120_000;
const REDIS_RENEW_MS = 20_000;

function holder(command: string): LeaseHolder {
  const now = new Date().toISOString();
  return {
    token: randomBytes(8).toString('hex'),
    host: hostname(),
    pid: process.pid,
    command,
    started_at: now,
    heartbeat_at: now,
  };
}

function isStale(h: LeaseHolder | undefined): boolean {
  if (!h) return true;
  if (h.host === hostname() && h.pid !== process.pid && !pidAlive(h.pid)) return true;
  const seen = Date.parse(h.heartbeat_at);
  return Number.isNaN(seen) || Date.now() - seen > STALE_MS;
}

function parse(text: string | undefined): LeaseHolder | undefined {
  try {
    const v = JSON.parse(text ?? '') as LeaseHolder;
    return typeof v.token === 'string' && typeof v.pid === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

function busy(where: string, h: LeaseHolder | undefined): StoreLockedError {
  const who = h
    ? `\`perks ${h.command}\` pid ${h.pid} on ${h.host}, started ${h.started_at}, last heartbeat ${h.heartbeat_at}`
    : 'an unreadable lease';
  return new StoreLockedError(
    `the store ${where} is in use by another run (${who}); wait for it to finish (a lease whose machine died expires 10 minutes after its last heartbeat)`,
  );
}

/** Takes the store's lease, or throws StoreLockedError (exit 5) naming the holder. */
export async function acquireLease(
  client: StoreClient,
  command: string,
  options: { redisUrl?: string; conditionalWrites: () => Promise<boolean> },
): Promise<Lease> {
  if (options.redisUrl) return redisLease(client, command, options.redisUrl);
  if (!(await options.conditionalWrites()))
    throw new StoreError(
      `the store ${client.where} does not enforce conditional writes (If-None-Match), so two machines could both take its lock: set PERKS_REDIS_URL to a Redis every machine reaches (docs/assumptions.md, Store)`,
      ExitCode.config,
    );
  return objectLease(client, command);
}

/**
 * Whether the service refuses a second `If-None-Match: *` create of one object (412), as AWS S3 does:
 * two writes of a probe object under `_perks/`, then its removal.
 */
export async function probeConditionalWrites(client: StoreClient): Promise<boolean> {
  const probe = `${META}/probe-${randomBytes(6).toString('hex')}`;
  await client.put(probe, Buffer.from('probe'), { ifNoneMatch: '*' });
  try {
    await client.put(probe, Buffer.from('probe again'), { ifNoneMatch: '*' });
    return false;
  } catch (err) {
    if (err instanceof PreconditionFailed) return true;
    throw err;
  } finally {
    await client.delete(probe);
  }
}

async function objectLease(client: StoreClient, command: string): Promise<Lease> {
  const me = holder(command);
  let etag: string | undefined;
  try {
    etag = (await client.put(LEASE, Buffer.from(JSON.stringify(me)), { ifNoneMatch: '*' })).etag;
  } catch (err) {
    if (!(err instanceof PreconditionFailed)) throw err;
    const current = await client.get(LEASE);
    const other = parse(current?.body.toString('utf8'));
    if (!current || !isStale(other)) throw busy(client.where, other);
    try {
      etag = (await client.put(LEASE, Buffer.from(JSON.stringify(me)), { ifMatch: current.etag })).etag;
    } catch (e) {
      if (e instanceof PreconditionFailed) throw busy(client.where, parse((await client.get(LEASE))?.body.toString()));
      throw e;
    }
  }
  let lost: string | undefined;
  const timer = setInterval(() => {
    const beat = { ...me, heartbeat_at: new Date().toISOString() };
    client
      .put(LEASE, Buffer.from(JSON.stringify(beat)), { ifMatch: etag })
      .then((r) => (etag = r.etag))
      .catch((err: unknown) => {
        if (err instanceof PreconditionFailed) lost = 'its lease was taken over by another machine';
      });
  }, OBJECT_HEARTBEAT_MS);
  timer.unref();
  return {
    kind: 'object',
    assertHeld() {
      if (lost)
        throw new StoreLockedError(`the store ${client.where}: ${lost}; nothing more of this command was committed`);
    },
    async release() {
      clearInterval(timer);
      if (lost) return;
      const current = await client.get(LEASE);
      if (parse(current?.body.toString('utf8'))?.token === me.token) await client.delete(LEASE);
    },
  };
}

/** Lua: renew or delete only while the value is still ours. */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const TAKE_OVER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return 0 end`;

async function redisLease(client: StoreClient, command: string, url: string): Promise<Lease> {
  const key = `perks-store-lease:${createHash('sha256').update(client.where).digest('hex').slice(0, 24)}`;
  const redis = new (redisClient())({ ...redisOptions(url), lazyConnect: true, maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined); // reported by the command that fails
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new StoreError(
      `PERKS_REDIS_URL: cannot reach Redis at ${describeRedisUrl(url)} for the store's lock: ${(err as Error).message}`,
      ExitCode.failed,
    );
  }
  const me = holder(command);
  const value = JSON.stringify(me);
  let ok = (await redis.set(key, value, 'PX', REDIS_TTL_MS, 'NX')) === 'OK';
  if (!ok) {
    const currentText = (await redis.get(key)) ?? undefined;
    const other = parse(currentText);
    // a holder that died on this host (killed, then rerun here) need not be waited for
    if (currentText !== undefined && other && other.host === hostname() && !pidAlive(other.pid))
      ok = (await redis.eval(TAKE_OVER, 1, key, currentText, value, REDIS_TTL_MS)) === 'OK';
    else if (currentText === undefined) ok = (await redis.set(key, value, 'PX', REDIS_TTL_MS, 'NX')) === 'OK';
    if (!ok) {
      redis.disconnect();
      throw busy(client.where, other);
    }
  }
  let lost: string | undefined;
  const timer = setInterval(() => {
    redis
      .eval(RENEW, 1, key, value, REDIS_TTL_MS)
      .then((r) => {
        if (r !== 1) lost = 'its lease in Redis expired or was taken';
      })
      .catch(() => undefined); // a Redis restart: the next renewal tells
  }, REDIS_RENEW_MS);
  timer.unref();
  return {
    kind: 'redis',
    assertHeld() {
      if (lost)
        throw new StoreLockedError(`the store ${client.where}: ${lost}; nothing more of this command was committed`);
    },
    async release() {
      clearInterval(timer);
      try {
        await redis.eval(RELEASE, 1, key, value);
      } finally {
        redis.disconnect();
      }
    },
  };
}
