/** A sliding-window limiter per key (client_id): at most `limit` hits in any window; refused hits do not count. */
import { RATE_WINDOW_MS } from '../choices.js';

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a hit would be allowed (0 when allowed). */
  retryAfter: number;
}

export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();

  constructor(
    public limit: number,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  hit(key: string, now = Date.now()): Verdict {
    const list = this.hits.get(key) ?? [];
    while (list.length && list[0] <= now - this.windowMs) list.shift();
    this.hits.set(key, list);
    if (list.length >= this.limit) {
      const wait = list[list.length - this.limit] + this.windowMs - now;
      return { allowed: false, limit: this.limit, remaining: 0, retryAfter: Math.max(1, Math.ceil(wait / 1000)) };
    }
    list.push(now);
    return { allowed: true, limit: this.limit, remaining: this.limit - list.length, retryAfter: 0 };
  }
}
