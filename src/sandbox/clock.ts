/**
 * The sandbox's data clock. "today" is a UTC calendar day; generated history ends at its midnight, and
 * the clock ticks in real time from there (or from the program clock's time of day, PERKS_NOW or the
 * system's, when no --today was given).
 * advance(days) moves it forward; rate limits and token expiry use the real clock instead.
 */
import { now } from '../shared/clock.js';

export const DAY_MS = 86_400_000;

export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** ISO 8601 UTC with microseconds, the API's timestamp form: 2026-11-22T10:00:00.123456Z. */
export function isoMicro(ms: number, micro = 0): string {
  return new Date(ms).toISOString().replace('Z', `${String(micro % 1000).padStart(3, '0')}Z`);
}

export class Clock {
  private todayMs: number;
  private readonly intraday: number;
  private readonly realStart = Date.now();

  constructor(today?: string) {
    const real = now().getTime();
    this.todayMs = today ? dayStart(today) : dayStart(dayOf(real));
    this.intraday = today ? 0 : real - this.todayMs;
  }

  get today(): string {
    return dayOf(this.todayMs);
  }

  /** Midnight UTC of today: generated history ends here. */
  get todayStart(): number {
    return this.todayMs;
  }

  /** The data "now" (ms since epoch). */
  now(): number {
    return this.todayMs + this.intraday + (Date.now() - this.realStart);
  }

  advance(days: number): void {
    this.todayMs += days * DAY_MS;
  }

  /** The envelope timestamp: data now, with a microsecond part. */
  stamp(): string {
    const micro = Number((process.hrtime.bigint() / 1000n) % 1000n);
    return isoMicro(this.now(), micro);
  }
}
