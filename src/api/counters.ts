/** What a run reports about its API traffic: calls, retries, throttling, tokens, bytes, limiter waits. */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Traffic of one part of a run (e.g. one group of a stream): what `inScope` attributes to it. */
export interface ScopeTraffic {
  calls: number;
  retries: number;
  throttled: number;
}

const scope = new AsyncLocalStorage<string>();

/** Runs `work` so that the calls, retries and 429s it causes are also counted under `name`. */
export function inScope<T>(name: string, work: () => Promise<T>): Promise<T> {
  return scope.run(name, work);
}

/** The scope of the code running now (read before a call is queued: the limiter runs it elsewhere). */
export const currentScope = (): string | undefined => scope.getStore();

export class Counters {
  calls = 0;
  callsByOperation: Record<string, number> = {};
  retries = 0;
  throttled = 0;
  tokenRequests = 0;
  bytes = 0;
  /** Sum over calls of the time each waited in the limiter's queue. */
  limiterWaitMs = 0;
  firstCallAt?: number;
  lastCallAt?: number;
  byScope: Record<string, ScopeTraffic> = {};

  private scoped(name: string | undefined): ScopeTraffic | undefined {
    if (name === undefined) return undefined;
    return (this.byScope[name] ??= { calls: 0, retries: 0, throttled: 0 });
  }

  recordRetry(): void {
    this.retries += 1;
    const s = this.scoped(currentScope());
    if (s) s.retries += 1;
  }

  recordThrottle(): void {
    this.throttled += 1;
    const s = this.scoped(currentScope());
    if (s) s.throttled += 1;
  }

  /** `scopeName`: the scope of the caller, read before the call waited in the limiter. */
  recordCall(operation: string, bytes: number, waitedMs: number, scopeName = currentScope()): void {
    const now = Date.now();
    const s = this.scoped(scopeName);
    if (s) s.calls += 1;
    this.calls += 1;
    this.callsByOperation[operation] = (this.callsByOperation[operation] ?? 0) + 1;
    this.bytes += bytes;
    this.limiterWaitMs += waitedMs;
    this.firstCallAt ??= now;
    this.lastCallAt = now;
  }

  /** Calls per minute over the span between the first and the last call. */
  callsPerMinute(): number {
    if (!this.firstCallAt || !this.lastCallAt || this.calls < 2) return 0;
    const minutes = (this.lastCallAt - this.firstCallAt) / 60_000;
    return minutes > 0 ? (this.calls - 1) / minutes : 0;
  }

  snapshot() {
    return {
      calls: this.calls,
      callsByOperation: { ...this.callsByOperation },
      retries: this.retries,
      throttled: this.throttled,
      tokenRequests: this.tokenRequests,
      bytes: this.bytes,
      limiterWaitMs: Math.round(this.limiterWaitMs),
      callsPerMinute: Math.round(this.callsPerMinute() * 10) / 10,
      byScope: Object.fromEntries(Object.entries(this.byScope).map(([k, v]) => [k, { ...v }])),
    };
  }
}
