/**
 * One call budget per credential (Bottleneck). Calls are spaced evenly (minTime), not released in
 * fixed-window bursts, so a server counting over a sliding 60-second window never sees more than the
 * limit. A 429 pauses the whole credential (reservoir 0 until Retry-After) and slows it down; the
 * pace recovers once a minute passes without throttling. The retry loop lives outside (guide example 6).
 */
import Bottleneck from 'bottleneck';

/** Headroom under the limit: network jitter can bring two calls closer than they were sent. */
const SAFETY = 1.01;
/** Factor by which a 429 slows the pace; the pace recovers by RECOVERY per quiet interval. */
const SLOWDOWN = 1.25;
const RECOVERY = 0.97;
const QUIET_MS = 60_000;

export interface LimiterOptions {
  /** Calls per minute allowed for this credential. */
  callsPerMinute: number;
  /** Calls in flight at once; spacing is what enforces the rate. */
  maxConcurrent?: number;
  /** Bottleneck id (the Redis key prefix when clustered). */
  id?: string;
  /** Extra Bottleneck options, e.g. the Redis datastore for clustering. */
  bottleneck?: Bottleneck.ConstructorOptions;
}

export class CredentialLimiter {
  private readonly limiter: Bottleneck;
  private baseMinTime: number;
  private minTime: number;
  private last429 = 0;
  private resumeAt = 0;
  private resumeTimer?: NodeJS.Timeout;

  constructor(readonly options: LimiterOptions) {
    this.baseMinTime = CredentialLimiter.spacing(options.callsPerMinute);
    this.minTime = this.baseMinTime;
    this.limiter = new Bottleneck({
      maxConcurrent: options.maxConcurrent ?? 8,
      minTime: this.minTime,
      id: options.id,
      ...options.bottleneck,
    });
  }

  static spacing(callsPerMinute: number): number {
    return Math.ceil((60_000 / callsPerMinute) * SAFETY);
  }

  /** Runs fn when the budget allows; resolves with its value and how long it waited in the queue. */
  async schedule<T>(fn: () => Promise<T>): Promise<{ value: T; waitedMs: number }> {
    const queuedAt = performance.now();
    let waitedMs = 0;
    const value = await this.limiter.schedule(() => {
      waitedMs = performance.now() - queuedAt;
      return fn();
    });
    this.recover();
    return { value, waitedMs };
  }

  /** A 429: pause every call of this credential until Retry-After (or one spacing) and slow down. */
  throttled(retryAfterMs?: number): void {
    this.last429 = Date.now();
    this.setMinTime(Math.min(this.minTime * SLOWDOWN, 60_000));
    this.pauseFor(retryAfterMs ?? this.minTime);
  }

  /** Server-sent X-RateLimit-Limit / X-RateLimit-Remaining, when a server sends them. */
  rateHeaders(limit?: number, remaining?: number): void {
    if (limit && limit > 0) {
      const spacing = CredentialLimiter.spacing(limit);
      if (spacing > this.baseMinTime) {
        this.baseMinTime = spacing;
        if (this.minTime < spacing) this.setMinTime(spacing);
      }
    }
    if (remaining === 0) this.pauseFor(this.minTime);
  }

  /** Calls per minute the limiter currently allows. */
  get currentRate(): number {
    return 60_000 / this.minTime;
  }

  async stop(): Promise<void> {
    clearTimeout(this.resumeTimer);
    await this.limiter.stop({ dropWaitingJobs: false });
    await this.limiter.disconnect?.();
  }

  private pauseFor(ms: number): void {
    const until = Date.now() + ms;
    if (until <= this.resumeAt) return;
    this.resumeAt = until;
    void this.limiter.updateSettings({ reservoir: 0 });
    clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      this.resumeAt = 0;
      void this.limiter.updateSettings({ reservoir: null });
    }, ms);
    this.resumeTimer.unref?.();
  }

  private recover(): void {
    if (this.minTime <= this.baseMinTime || Date.now() - this.last429 < QUIET_MS) return;
    this.setMinTime(Math.max(this.baseMinTime, this.minTime * RECOVERY));
    this.last429 = Date.now() - QUIET_MS + QUIET_MS / 10;
  }

  private setMinTime(ms: number): void {
    this.minTime = Math.ceil(ms);
    void this.limiter.updateSettings({ minTime: this.minTime });
  }
}
