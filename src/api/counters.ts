/** What a run reports about its API traffic: calls, retries, throttling, tokens, bytes, limiter waits. */
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

  recordCall(operation: string, bytes: number, waitedMs: number): void {
    const now = Date.now();
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
    };
  }
}
