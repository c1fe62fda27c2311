/**
 * One call budget per credential (Bottleneck). Calls are spaced evenly (minTime), not released in
 * fixed-window bursts, so a server counting over a sliding 60-second window never sees more than the
 * limit. A 429 pauses the whole credential (reservoir 0 until Retry-After) and slows it down; the
 * pace recovers once a minute passes without throttling. The retry loop lives outside (guide example 6).
 * With `cluster` (PERKS_REDIS_URL) the budget, the pause and the pace are shared in Redis by every
 * process of the credential (cluster.ts).
 */
import Bottleneck from 'bottleneck';
import {
  CLUSTER_DEFAULTS,
  ClusterLink,
  clusteredOptions,
  type ClusterMessage,
  type ClusterSettings,
} from './cluster.js';
import { PauseTooLongError } from './errors.js';
import { FastLane } from './fast-lane.js';
import { hrNow, type WireEvent } from './transport.js';

/** Headroom under the limit: network jitter can bring two calls closer than they were sent. */
const SAFETY = 1.01;
/** Factor by which a 429 slows the pace; the pace recovers by RECOVERY per quiet interval. */
const SLOWDOWN = 1.25;
const RECOVERY = 0.97;
const QUIET_MS = 60_000;
/** Longest pause waited out unless the options say otherwise (the client passes its maxRetryAfterMs). */
const DEFAULT_MAX_PAUSE_MS = 5 * 60_000;
/** How long stop() waits for a clustered limiter's last jobs before disconnecting anyway. */
const STOP_GRACE_MS = 5_000;

export interface LimiterOptions {
  /** Calls per minute allowed for this credential. */
  callsPerMinute: number;
  /** Calls in flight at once; spacing is what enforces the rate. */
  maxConcurrent?: number;
  /** A pause (Retry-After) longer than this is not waited out: waiting calls fail with PauseTooLongError. */
  maxPauseMs?: number;
  /** Bottleneck id (the Redis key prefix when clustered). */
  id?: string;
  /** Share the budget through Redis with every process of the same credential. */
  cluster?: ClusterSettings;
  /** For tests and diagnostics: when a pause is recorded in Redis for the cluster. */
  observe?: (event: WireEvent) => void;
  /** Extra Bottleneck options. */
  bottleneck?: Bottleneck.ConstructorOptions;
}

export class CredentialLimiter {
  private readonly limiter: Bottleneck;
  /** Used instead of Bottleneck while the spacing is below one millisecond (never clustered). */
  private readonly fastLane: FastLane;
  private readonly link?: ClusterLink;
  private joined?: Promise<void>;
  private baseMinTime: number;
  private minTime: number;
  private last429 = 0;
  private resumeAt = 0;
  private resumeTimer?: NodeJS.Timeout;

  constructor(readonly options: LimiterOptions) {
    // Clustered, Bottleneck spaces the calls of every process in Redis, in whole milliseconds.
    this.baseMinTime = options.cluster
      ? Math.max(1, CredentialLimiter.spacing(options.callsPerMinute))
      : CredentialLimiter.spacing(options.callsPerMinute);
    this.minTime = this.baseMinTime;
    this.limiter = new Bottleneck({
      // Clustered, maxConcurrent would cap the calls in flight of ALL processes together (8 would cap N
      // workers at 8 / latency): spacing alone keeps the rate there, and each process bounds its own.
      maxConcurrent: options.cluster ? (options.maxConcurrent ?? null) : (options.maxConcurrent ?? 8),
      minTime: bottleneckMinTime(this.minTime),
      id: options.id,
      ...(options.cluster ? clusteredOptions(options.cluster) : {}),
      ...options.bottleneck,
    });
    this.fastLane = new FastLane(options.maxConcurrent ?? 8);
    if (options.cluster) this.link = new ClusterLink(this.limiter, options.cluster, (m) => this.joinThrottle(m));
  }

  /** Milliseconds between two calls: whole milliseconds, or a fraction of one above 59,400 calls/min. */
  static spacing(callsPerMinute: number): number {
    const ms = (60_000 / callsPerMinute) * SAFETY;
    return ms >= 1 ? Math.ceil(ms) : ms;
  }

  get clustered(): boolean {
    return this.link !== undefined;
  }

  /** Runs fn when the budget allows; resolves with its value and how long it waited in the queue. */
  async schedule<T>(fn: () => Promise<T>): Promise<{ value: T; waitedMs: number }> {
    if (this.link) await (this.joined ??= this.join(this.link));
    const queuedAt = performance.now();
    let waitedMs = 0;
    const job = async () => {
      // Jobs Bottleneck admitted before a 429 arrived must not start before its Retry-After either.
      await this.untilResumed();
      waitedMs = performance.now() - queuedAt;
      return fn();
    };
    // A clustered job frees its slot by itself if this process dies mid-call.
    const value = this.link
      ? await this.limiter.schedule({ expiration: CLUSTER_DEFAULTS.jobExpirationMs }, job)
      : this.minTime < 1
        ? await this.fastLane.run(this.minTime, job)
        : await this.limiter.schedule(job);
    this.recover();
    return { value, waitedMs };
  }

  /**
   * Whether a request may be written now: undefined when no pause is on (and, clustered, none is in Redis),
   * else a promise that resolves when the pause ends, or rejects with PauseTooLongError when it lasts longer
   * than maxPauseMs. Called at the last moment (the transport's beforeWrite), so that a request admitted
   * before a 429 arrived, here or in another process of the cluster, waits out the Retry-After too.
   */
  untilResumed(): Promise<number | void> | undefined {
    if (!this.link?.isConnected && this.resumeAt <= Date.now()) return undefined;
    return this.waitPause();
  }

  /** Resolves, clustered, with when its last look in Redis was sent (hrNow: for the wire events). */
  private async waitPause(): Promise<number | void> {
    for (;;) {
      // Clustered, the pause another process recorded in Redis counts even before its message arrives.
      const checkedAt = this.link?.isConnected ? hrNow() : undefined;
      const shared = checkedAt !== undefined ? await this.link!.pauseLeft().catch(() => 0) : 0;
      const left = Math.max(this.resumeAt - Date.now(), shared);
      if (left <= 0) return checkedAt;
      if (left > (this.options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS)) throw new PauseTooLongError(left);
      await new Promise((r) => setTimeout(r, left));
    }
  }

  /** A 429: pause every call of this credential until Retry-After (or one spacing) and slow down. */
  throttled(retryAfterMs?: number): void {
    // 429s answering calls sent before the pause began are one event: slow down once per pause.
    if (this.resumeAt <= Date.now()) this.setMinTime(Math.min(this.minTime * SLOWDOWN, 60_000));
    this.last429 = Date.now();
    this.pauseFor(retryAfterMs ?? this.minTime);
  }

  /** Server-sent X-RateLimit-Limit / X-RateLimit-Remaining, when a server sends them. */
  rateHeaders(limit?: number, remaining?: number): void {
    if (limit && limit > 0) this.reported = { limit, remaining };
    if (limit && limit > 0) {
      const spacing = CredentialLimiter.spacing(limit);
      if (spacing > this.baseMinTime) {
        this.baseMinTime = spacing;
        if (this.minTime < spacing) this.setMinTime(spacing);
      }
    }
    if (remaining === 0) this.pauseFor(this.minTime);
  }

  /** The last X-RateLimit-Limit (and -Remaining) a server sent, if it sends them. */
  reported?: { limit: number; remaining?: number };

  /** Calls per minute the limiter currently allows. */
  get currentRate(): number {
    return 60_000 / this.minTime;
  }

  /** Lets queued calls finish (after a pause in progress ends), then closes; a clustered limiter also disconnects. */
  async stop(): Promise<void> {
    if (this.link && !this.link.isConnected) {
      // Never connected: nothing of ours runs in the cluster; just close the clients.
      clearTimeout(this.resumeTimer);
      await this.limiter.disconnect(false);
      return;
    }
    const stopped = this.limiter.stop({ dropWaitingJobs: false });
    await (this.link ? Promise.race([stopped, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]) : stopped);
    clearTimeout(this.resumeTimer);
    if (this.link) await this.limiter.disconnect(true).catch(() => this.limiter.disconnect(false));
  }

  /** First call of a clustered limiter: connect, take up a pause in progress, agree on the pace. */
  private async join(link: ClusterLink): Promise<void> {
    await link.ready();
    const left = await link.pauseLeft();
    // No pause in progress: a reservoir of 0 can only be a dead process's pause; lift it.
    if (left > 0) this.pauseLocally(left);
    // eslint-disable-next-line @typescript-eslint/await-thenable -- typed as Bottleneck, it returns a promise (lib/Bottleneck.js)
    else await this.limiter.updateSettings({ reservoir: null });
    const shared = await link.sharedMinTime();
    // eslint-disable-next-line @typescript-eslint/await-thenable -- as above: the clustered store is updated when it resolves
    if (shared === undefined || shared < this.minTime) await this.limiter.updateSettings({ minTime: this.minTime });
    else this.minTime = shared;
  }

  /** Another process of the cluster was throttled: adopt its pace and end the pause on our own timer too. */
  private joinThrottle(m: ClusterMessage): void {
    this.last429 = Date.now();
    this.minTime = Math.max(this.minTime, m.minTime);
    this.pauseLocally(m.pauseMs);
  }

  private pauseFor(ms: number): void {
    if (!this.pauseLocally(ms)) return;
    if (this.link?.isConnected)
      void this.link
        .broadcast({ pauseMs: ms, minTime: this.minTime }, () =>
          this.options.observe?.({ kind: 'shared', at: Date.now(), pauseMs: ms, recordedAt: hrNow() }),
        )
        .catch(() => undefined);
  }

  /** Reservoir 0 now, back to unlimited after ms; false when a longer pause is already on. */
  private pauseLocally(ms: number): boolean {
    const until = Date.now() + ms;
    if (until <= this.resumeAt) return false;
    this.resumeAt = until;
    this.update({ reservoir: 0 });
    clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      this.resumeAt = 0;
      this.update({ reservoir: null });
    }, ms);
    // Not unref'd: while every call waits out the pause, this timer is what keeps the process alive. A
    // pause longer than anyone waits (waiting calls fail at once) must not keep it alive for a day.
    if (ms > (this.options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS)) this.resumeTimer.unref();
    return true;
  }

  private recover(): void {
    if (this.minTime <= this.baseMinTime || Date.now() - this.last429 < QUIET_MS) return;
    this.setMinTime(Math.max(this.baseMinTime, this.minTime * RECOVERY));
    this.last429 = Date.now() - QUIET_MS + QUIET_MS / 10;
  }

  private setMinTime(ms: number): void {
    this.minTime = ms >= 1 ? Math.ceil(ms) : ms;
    this.update({ minTime: bottleneckMinTime(this.minTime) });
  }

  /** Settings change (shared by the cluster when clustered); a Redis hiccup here must not crash the run. */
  private update(settings: Bottleneck.ConstructorOptions): void {
    void Promise.resolve(this.limiter.updateSettings(settings)).catch(() => undefined);
  }
}

/** Bottleneck's minTime: the spacing in whole milliseconds, 0 when it is below one (paced by the limiter itself). */
function bottleneckMinTime(spacing: number): number {
  return spacing >= 1 ? spacing : 0;
}
