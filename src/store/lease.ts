/**
 * One writer per store, across machines: the lease. A command that changes the store (run, extract,
 * build, close, writeback…) holds it from before it reads the store until its last publish.
 *
 * One TTL for both kinds (`ttlMs`, by default DEFAULTS.store.leaseSeconds): a lease lasts that long after
 * its holder's last heartbeat, and the holder renews it every sixth of it, writing a new `heartbeat_at`.
 *
 * - With PERKS_REDIS_URL: a Redis key (`SET NX PX ttl`). Each heartbeat replaces its value (a new
 *   heartbeat_at, the expiry set again) through a compare-and-set on the previous whole value; release is
 *   a compare-and-delete. A key whose holder stopped renewing is freed by its own expiry. Works with any
 *   S3-compatible service.
 * - Otherwise: the object `_perks/lease.json`, created with `If-None-Match: *` (only if absent), renewed
 *   with `If-Match: <its ETag>`, taken over when stale with `If-Match` on the stale version. It is stale
 *   when its last heartbeat is older than the holder's own `ttl_ms`. This needs a service that enforces
 *   conditional writes (AWS S3 since 2024, MinIO, Cloudflare R2, Ceph RGW…): each working copy first
 *   probes them (probe.ts: both headers, and the form of ETag If-Match takes), and refuses to write
 *   (exit 2, naming what the service does not do) where they are not enforced and no Redis is set, rather
 *   than let two machines both believe they hold the store.
 *
 * Either kind is taken over before its TTL only when its holder is certainly dead: a process of this
 * same host, boot and PID namespace whose pid is gone (certainlyDead, src/shared/process-identity.ts). A
 * holder in another container sharing the host's name is not judged by its pid: it is waited for.
 *
 * A renewal refused (another run took the lease over, or it expired) marks the lease lost: `onLost` is
 * told once, `assertHeld()` throws from then on. Two renewals failed in a row (the service unreachable, or
 * refusing our own If-Match) stop the command too, at its next publish, saying the service's answer: a lease
 * not renewed is one another machine may take over after the TTL. `verify()` reads the lease afresh: the
 * fence before a commit.
 *
 * Times here are the real wall clock (Date.now, new Date), never the program's clock (src/shared/clock.ts,
 * which tests and operators pin): the lease measures elapsed time between machines, which a pinned clock
 * restarted in every process would not.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describeRedisUrl, redisClient, redisOptions } from '../api/cluster.js';
import { DEFAULTS } from '../config/defaults.js';
import { ExitCode } from '../shared/exit-codes.js';
import { certainlyDead, processIdentity } from '../shared/process-identity.js';
import type { StoreClient } from './client.js';
import { PreconditionFailed, StoreError, StoreLockedError } from './errors.js';
import { LEASE } from './layout.js';
import { enforced, lacking, type ConditionalWrites } from './probe.js';

export interface LeaseHolder {
  /** Random, one per acquire: who holds the lease. */
  token: string;
  host: string;
  /** The kernel's boot id and the PID namespace (absent in leases of older versions, or where unreadable). */
  boot_id?: string;
  pid_ns?: string;
  pid: number;
  command: string;
  started_at: string;
  heartbeat_at: string;
  /** How long the lease lasts after heartbeat_at (absent in leases of older versions). */
  ttl_ms?: number;
}

export interface Lease {
  readonly kind: 'redis' | 'object';
  readonly token: string;
  readonly ttlMs: number;
  /** Throws StoreLockedError once a heartbeat found the lease lost: nothing more may be committed. */
  assertHeld(): void;
  /** Reads the lease afresh (the fence before a commit); throws StoreLockedError, and marks it lost, when it is not ours. */
  verify(): Promise<void>;
  release(): Promise<void>;
}

export interface LeaseOptions {
  redisUrl?: string;
  /** What the service does with conditional writes (probe.ts), asked only for a lease in the store itself. */
  conditionalWrites: () => Promise<ConditionalWrites>;
  /** How long the lease lasts after each heartbeat (default DEFAULTS.store.leaseSeconds). */
  ttlMs?: number;
  /** Called once, from the heartbeat, when it finds the lease lost; the one-line message says why. */
  onLost?: (message: string) => void;
}

/** Takes the store's lease, or throws StoreLockedError (exit 5) naming the holder. */
export async function acquireLease(client: StoreClient, command: string, options: LeaseOptions): Promise<Lease> {
  const ttlMs = Math.max(6, Math.round(options.ttlMs ?? DEFAULTS.store.leaseSeconds * 1000));
  if (options.redisUrl) return redisLease(client, command, options.redisUrl, ttlMs, options.onLost);
  const found = await options.conditionalWrites();
  if (!enforced(found))
    throw new StoreError(
      `the store ${client.where} does not enforce conditional writes (${lacking(found)}), ` +
        `so two machines could both take its lease: ` +
        `set PERKS_REDIS_URL to a Redis every machine reaches (docs/reference/store.md, providers; perks store check)`,
      ExitCode.config,
    );
  return objectLease(client, command, ttlMs, options.onLost);
}

function holder(command: string, ttlMs: number): LeaseHolder {
  const now = new Date().toISOString();
  const { host, boot_id, pid_ns, pid } = processIdentity();
  return {
    token: randomBytes(16).toString('hex'),
    host,
    boot_id,
    pid_ns,
    pid,
    command,
    started_at: now,
    heartbeat_at: now,
    ttl_ms: ttlMs,
  };
}

function parse(text: string | null | undefined): LeaseHolder | undefined {
  try {
    const v = JSON.parse(text ?? '') as LeaseHolder;
    return typeof v.token === 'string' && typeof v.pid === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The holder's own TTL when it says one, else `ours` (a lease of an older version). */
const ttlOf = (h: LeaseHolder, ours: number) =>
  typeof h.ttl_ms === 'number' && Number.isFinite(h.ttl_ms) && h.ttl_ms > 0 ? h.ttl_ms : ours;

/** `2 min`, `90 s`, `1.2 s`. */
export function formatTtl(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** An object lease no one renewed within its TTL, or whose holder is certainly dead, may be taken over. */
function isStale(h: LeaseHolder | undefined, ttlMs: number): boolean {
  if (!h) return true;
  if (certainlyDead(h)) return true;
  const seen = Date.parse(h.heartbeat_at);
  return Number.isNaN(seen) || Date.now() - seen > ttlOf(h, ttlMs);
}

const who = (h: LeaseHolder) =>
  `\`perks ${h.command}\` pid ${h.pid} on ${h.host}, started ${h.started_at}, last heartbeat ${h.heartbeat_at}`;

function busy(where: string, h: LeaseHolder | undefined, ttlMs: number): StoreLockedError {
  if (!h) return new StoreLockedError(`the store ${where} is in use by another run (an unreadable lease); wait for it`);
  const ttl = ttlOf(h, ttlMs);
  const seen = Date.parse(h.heartbeat_at);
  const expiry = Number.isNaN(seen)
    ? `its lease lasts ${formatTtl(ttl)} after its last heartbeat`
    : `it expires at ${new Date(seen + ttl).toISOString()} unless renewed; its lease lasts ${formatTtl(ttl)} after its last heartbeat`;
  return new StoreLockedError(
    `the store ${where} is in use by another run (${who(h)}); wait for it to finish (${expiry})`,
  );
}

/** Why a lease is no longer ours, from what holds it now. */
function lostMessage(where: string, now: LeaseHolder | undefined, ttlMs: number): string {
  const why = now
    ? `its lease was taken over by another run (${who(now)})`
    : `its lease expired before it was renewed (it lasts ${formatTtl(ttlMs)} after its last heartbeat)`;
  return `the store ${where}: ${why}; nothing more of this command was committed`;
}

/** Renewals that may fail in a row (the store or Redis not reached, or refusing) before the command stops. */
const FAILED_RENEWALS = 2;

/**
 * The heartbeat both kinds share: one renewal at a time, every sixth of the TTL; the lost state. `renew`
 * resolves undefined when renewed, or the message saying the lease is no longer ours; it throws with the
 * server's answer when the renewal failed. After FAILED_RENEWALS failures in a row the lease is as good as
 * lost (another machine may take it over after the TTL): assertHeld() throws from then on, so the command
 * stops before its next publish or checkpoint, saying why (exit 1: a rerun is safe).
 */
function keepAlive(
  where: string,
  ttlMs: number,
  renew: () => Promise<string | undefined>,
  onLost?: (message: string) => void,
) {
  let lost: string | undefined;
  let failing: string | undefined;
  let failures = 0;
  let stopped = false;
  let inflight: Promise<void> | undefined;
  const timer = setInterval(
    () => {
      if (inflight || lost !== undefined || failing !== undefined || stopped) return;
      inflight = renew()
        .then((message) => {
          failures = 0;
          if (message === undefined || lost !== undefined) return;
          lost = message;
          clearInterval(timer);
          if (!stopped) onLost?.(message); // not once the command released it
        })
        .catch((err: unknown) => {
          if (++failures < FAILED_RENEWALS) return; // the next heartbeat tries again
          failing =
            `the store ${where}: its lease could not be renewed ${failures} times in a row (the last answer: ` +
            `${(err as Error).message}); this command stopped before its next publish, so nothing more of it was committed; a rerun is safe`;
          clearInterval(timer);
        })
        .finally(() => (inflight = undefined));
    },
    Math.max(1, Math.floor(ttlMs / 6)),
  );
  timer.unref();
  return {
    lost: () => lost,
    markLost(message: string) {
      lost ??= message;
      clearInterval(timer);
    },
    assertHeld() {
      if (lost !== undefined) throw new StoreLockedError(lost);
      if (failing !== undefined) throw new StoreError(failing, ExitCode.failed);
    },
    /** Waits for the renewal in flight, if any. */
    settled: () => inflight ?? Promise.resolve(),
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

async function objectLease(
  client: StoreClient,
  command: string,
  ttlMs: number,
  onLost?: (message: string) => void,
): Promise<Lease> {
  const me = holder(command, ttlMs);
  let etag: string | undefined;
  try {
    etag = (await client.put(LEASE, Buffer.from(JSON.stringify(me)), { ifNoneMatch: '*' })).etag;
  } catch (err) {
    if (!(err instanceof PreconditionFailed)) throw err;
    const current = await client.get(LEASE);
    const other = parse(current?.body.toString('utf8'));
    if (!current || !isStale(other, ttlMs)) throw busy(client.where, other, ttlMs);
    try {
      etag = (await client.put(LEASE, Buffer.from(JSON.stringify(me)), { ifMatch: current.etag })).etag;
    } catch (e) {
      if (e instanceof PreconditionFailed)
        throw busy(client.where, parse((await client.get(LEASE))?.body.toString('utf8')), ttlMs);
      throw e;
    }
  }
  /** The lease as it is now: ours (its ETag) or another's. */
  const read = async () => {
    const current = await client.get(LEASE);
    const h = parse(current?.body.toString('utf8'));
    return { h, ours: h?.token === me.token, etag: current?.etag };
  };
  const keeper = keepAlive(
    client.where,
    ttlMs,
    async () => {
      const beat: LeaseHolder = { ...me, heartbeat_at: new Date().toISOString() };
      try {
        etag = (await client.put(LEASE, Buffer.from(JSON.stringify(beat)), { ifMatch: etag })).etag;
        return undefined;
      } catch (err) {
        if (!(err instanceof PreconditionFailed)) throw err;
        const now = await read();
        if (!now.ours) return lostMessage(client.where, now.h, ttlMs);
        etag = now.etag;
        // our own write whose answer was lost (the SDK retried the PUT): renewed
        if (now.h?.heartbeat_at === beat.heartbeat_at) return undefined;
        throw new Error(
          `HTTP 412 PreconditionFailed to If-Match on the lease's own current ETag ${now.etag ?? ''} (sent` +
            ` ${client.ifMatchForm}): the service does not honour If-Match as probed; perks store check says what it does`,
          { cause: err },
        );
      }
    },
    onLost,
  );
  return {
    kind: 'object',
    token: me.token,
    ttlMs,
    assertHeld: () => keeper.assertHeld(),
    async verify() {
      keeper.assertHeld();
      const now = await read();
      if (now.ours) return;
      keeper.markLost(lostMessage(client.where, now.h, ttlMs));
      keeper.assertHeld();
    },
    async release() {
      keeper.stop();
      await keeper.settled();
      if (keeper.lost() !== undefined) return;
      if ((await read()).ours) await client.delete(LEASE);
    },
  };
}

/** Redis at `url` did not answer `what` (exit 1: transient, a rerun is safe). */
const unreachable = (url: string, err: unknown, what: string) =>
  new StoreError(
    `PERKS_REDIS_URL: cannot reach Redis at ${describeRedisUrl(url)} ${what}: ${(err as Error).message}`,
    ExitCode.failed,
  );

/** A connection to the Redis at `url`, or the error that says it cannot be reached. */
async function connectRedis(url: string) {
  const redis = new (redisClient())({ ...redisOptions(url), lazyConnect: true, maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined); // reported by the command that fails
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw unreachable(url, err, "for the store's lock");
  }
}

/**
 * Sets the lease's key to `value` when it is free, or held by a holder certainly dead (this host, boot and PID
 * namespace, its pid gone); any other holder's key expires by itself once it stops renewing: busy until then.
 */
async function takeRedisKey(
  redis: Awaited<ReturnType<typeof connectRedis>>,
  key: string,
  value: string,
  ttlMs: number,
  where: string,
): Promise<void> {
  if ((await redis.set(key, value, 'PX', ttlMs, 'NX')) === 'OK') return;
  const currentText = await redis.get(key);
  const other = parse(currentText);
  let ok = false;
  if (currentText !== null && other && certainlyDead(other))
    ok = (await redis.eval(REPLACE, 1, key, currentText, value, ttlMs)) === 'OK';
  else if (currentText === null) ok = (await redis.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
  if (!ok) throw busy(where, currentText === null ? parse(await redis.get(key)) : other, ttlMs);
}

/** The Redis key of the lease of the store `where` (StoreClient.where). */
export const redisLeaseKey = (where: string) =>
  `perks-store-lease:${createHash('sha256').update(where).digest('hex').slice(0, 24)}`;

/** Lua: replace (a heartbeat, a takeover) or delete only while the value is still the one we know. */
const REPLACE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

async function redisLease(
  client: StoreClient,
  command: string,
  url: string,
  ttlMs: number,
  onLost?: (message: string) => void,
): Promise<Lease> {
  const key = redisLeaseKey(client.where);
  const redis = await connectRedis(url);
  const me = holder(command, ttlMs);
  let value = JSON.stringify(me);
  try {
    await takeRedisKey(redis, key, value, ttlMs, client.where);
  } catch (err) {
    redis.disconnect();
    if (err instanceof StoreError) throw err;
    throw unreachable(url, err, "for the store's lock");
  }
  /** The value as it is now: ours (then `value` follows it) or another's. */
  const read = async () => {
    const text = await redis.get(key);
    const h = parse(text);
    if (text !== null && h?.token === me.token) value = text;
    return { h, ours: h?.token === me.token };
  };
  const keeper = keepAlive(
    client.where,
    ttlMs,
    async () => {
      const next = JSON.stringify({ ...me, heartbeat_at: new Date().toISOString() });
      if ((await redis.eval(REPLACE, 1, key, value, next, ttlMs)) === 'OK') {
        value = next;
        return undefined;
      }
      const now = await read(); // ours still: a renewal applied whose answer was lost
      return now.ours ? undefined : lostMessage(client.where, now.h, ttlMs);
    },
    onLost,
  );
  return {
    kind: 'redis',
    token: me.token,
    ttlMs,
    assertHeld: () => keeper.assertHeld(),
    async verify() {
      keeper.assertHeld();
      await keeper.settled(); // a renewal in flight changes the value
      let now: Awaited<ReturnType<typeof read>>;
      try {
        now = await read();
      } catch (err) {
        throw unreachable(url, err, "to check the store's lease");
      }
      if (now.ours) return;
      keeper.markLost(lostMessage(client.where, now.h, ttlMs));
      keeper.assertHeld();
    },
    async release() {
      keeper.stop();
      await keeper.settled();
      try {
        await redis.eval(RELEASE, 1, key, value);
      } finally {
        redis.disconnect();
      }
    },
  };
}
