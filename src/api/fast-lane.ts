/**
 * Calls paced below one millisecond apart: a limit above 59,400 calls/min, which only the sandbox or a
 * bench sets. Bottleneck starts every job on a timer (at least 1 ms in Node) behind its own locks, so
 * whatever its minTime it runs about 400 jobs a second: the limiter itself would then be the bottleneck.
 * Here each call takes the next slot of a clock that advances by the spacing (waiting only when the
 * slots run a millisecond or more ahead of now), with at most `maxConcurrent` calls in flight.
 */
export class FastLane {
  private nextSlot = 0;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly maxConcurrent: number) {}

  async run<T>(spacingMs: number, fn: () => Promise<T>): Promise<T> {
    // A call that has to wait is handed the place of the call that ends (the count does not drop
    // between them), so a newcomer cannot slip in first and make one more than maxConcurrent.
    if (this.inFlight >= this.maxConcurrent) await new Promise<void>((r) => this.waiting.push(r));
    else this.inFlight += 1;
    try {
      const now = performance.now();
      const slot = Math.max(now, this.nextSlot);
      this.nextSlot = slot + spacingMs;
      if (slot - now >= 1) await new Promise((r) => setTimeout(r, slot - now));
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight -= 1;
    }
  }
}
