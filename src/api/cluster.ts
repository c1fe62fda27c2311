/**
 * Clustered limiters (PERKS_REDIS_URL): Bottleneck's Redis datastore, through ioredis, so that every
 * process using one credential shares one budget. The limiter id is a hash of the API base URL and
 * the client id (never the secret); Bottleneck keeps its settings (minTime, reservoir) in Redis, so
 * `updateSettings` reaches the whole cluster. Keys expire after `idleTimeoutMs` without activity and
 * every job carries an expiration, so a worker that dies leaves nothing that blocks the others.
 * A 429 is also published to the other processes: each keeps its own timer to end the pause, so the
 * pause ends even when the process that saw the 429 is gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type Bottleneck from 'bottleneck';
import type { Redis, RedisOptions } from 'ioredis';
import { registerSecret } from '../shared/redact.js';
import { ClusterError } from './errors.js';

export interface ClusterSettings {
  /** redis:// or rediss:// URL; a password in it is registered as a secret and never printed. */
  redisUrl: string;
  /** Limiter id shared by every process of one credential (see clusterKey). */
  key: string;
  /** The shared state expires after this long without activity (Bottleneck `timeout`). */
  idleTimeoutMs?: number;
  /** How long to wait for Redis before giving up with a clear error. */
  connectTimeoutMs?: number;
}

export const CLUSTER_DEFAULTS = {
  idleTimeoutMs: 10 * 60_000,
  connectTimeoutMs: 10_000,
  /** A job's slot is freed after this even if its process died mid-call (above the 30 s request timeout). */
  jobExpirationMs: 90_000,
};

/** What one process tells the others: pause for `pauseMs`, then run at `minTime`. */
export interface ClusterMessage {
  pauseMs: number;
  minTime: number;
}

/** The limiter id of a credential: base URL (scheme, host, path) and client id, hashed. */
export function clusterKey(baseUrl: string, clientId: number | string): string {
  const u = new URL(baseUrl);
  const normal = `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  return `perks-${createHash('sha256').update(`${normal}\n${clientId}`).digest('hex').slice(0, 24)}`;
}

/** The URL without user name or password, for messages. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(an unparsable PERKS_REDIS_URL)';
  }
}

/**
 * ioredis's client class, loaded on first use: only a process with PERKS_REDIS_URL needs it, and loading it
 * costs every other command's start about 0.1 s.
 */
export function redisClient(): typeof Redis {
  return (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;
}

/** ioredis options from the URL; the password is registered with the redaction of every output. */
export function redisOptions(url: string, connectTimeoutMs = CLUSTER_DEFAULTS.connectTimeoutMs): RedisOptions {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  registerSecret(u.password);
  registerSecret(password);
  const db = u.pathname.length > 1 ? Number.parseInt(u.pathname.slice(1), 10) : 0;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password,
    db: Number.isFinite(db) ? db : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    connectTimeout: connectTimeoutMs,
    // Keep reconnecting during a run (a Redis restart is survivable); ready() bounds the first connect.
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
  };
}

/** Bottleneck constructor options that put a limiter in the cluster. */
export function clusteredOptions(settings: ClusterSettings): Bottleneck.ConstructorOptions {
  return {
    id: settings.key,
    datastore: 'ioredis',
    Redis: redisClient(),
    clientOptions: redisOptions(settings.redisUrl, settings.connectTimeoutMs),
    clearDatastore: false,
    timeout: settings.idleTimeoutMs ?? CLUSTER_DEFAULTS.idleTimeoutMs,
  };
}

/** The Redis side of one clustered limiter: readiness, the shared pause and the messages. */
export class ClusterLink {
  private readonly token = randomBytes(6).toString('hex');
  private lastError?: Error;
  private connected = false;

  constructor(
    private readonly limiter: Bottleneck,
    private readonly settings: ClusterSettings,
    onMessage: (message: ClusterMessage) => void,
  ) {
    limiter.on('error', (err: Error) => {
      this.lastError = err;
    });
    limiter.on('message', (text: string) => {
      const m = parseMessage(text);
      if (m && m.from !== this.token) onMessage(m);
    });
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Resolves once connected; after connectTimeoutMs a one-line error naming the server (no credentials). */
  async ready(): Promise<void> {
    const ms = this.settings.connectTimeoutMs ?? CLUSTER_DEFAULTS.connectTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const why = this.lastError ? `: ${this.lastError.message}` : '';
        reject(
          new ClusterError(
            `PERKS_REDIS_URL: cannot reach Redis at ${describeRedisUrl(this.settings.redisUrl)} within ${Math.round(ms / 1000)} s${why}`,
          ),
        );
      }, ms);
    });
    try {
      await Promise.race([this.limiter.ready(), timeout]);
      this.connected = true;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Milliseconds left of a pause another process started (0 when none). */
  async pauseLeft(): Promise<number> {
    const ttl = await this.redis().pttl(this.pauseKey());
    return ttl > 0 ? ttl : 0;
  }

  /** The minTime the cluster runs at now, as stored by Bottleneck. */
  async sharedMinTime(): Promise<number | undefined> {
    const value = await this.redis().hget(`b_${this.settings.key}_settings`, 'minTime');
    return value === null ? undefined : Number(value);
  }

  /** Tells every other process of the credential to pause and slow down; the pause key outlives no one. */
  async broadcast(message: ClusterMessage, recorded?: () => void): Promise<void> {
    const ms = Math.max(1, Math.ceil(message.pauseMs));
    await this.redis().set(this.pauseKey(), '1', 'PX', ms);
    recorded?.(); // from here every process's next write waits (CredentialLimiter.untilResumed)
    await this.limiter.publish(JSON.stringify({ from: this.token, pauseMs: ms, minTime: message.minTime }));
  }

  private redis(): Redis {
    return this.limiter.clients().client as Redis;
  }

  private pauseKey(): string {
    return `b_${this.settings.key}_perks_pause`;
  }
}

function parseMessage(text: string): (ClusterMessage & { from: string }) | undefined {
  try {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (typeof m.from === 'string' && typeof m.pauseMs === 'number' && typeof m.minTime === 'number') {
      return { from: m.from, pauseMs: m.pauseMs, minTime: m.minTime };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}
