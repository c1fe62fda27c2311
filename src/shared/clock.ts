/**
 * The one clock the program reads the calendar from: run ids, windows' upper bounds, snapshot days,
 * the build's as-of day, report months, "generated at" lines, and the stamps runs leave in the output and
 * later compare with each other (the lake's `_extracted_at`, the write-back ledger's `attempted_at`: one
 * clock for both, kept moving forward across processes by the output directory's stamps,
 * src/lake/run-stamps.ts). Durations (timeouts, rate limiting, lock heartbeats) keep using the process's
 * own timers: they measure time, they do not read the date.
 *
 * `PERKS_NOW` pins it: an ISO 8601 instant (`2026-11-22T12:00:00Z`), or a day (`2026-11-22`, read as
 * noon UTC so every group's local day is that day from Honolulu to Auckland). The clock then starts at
 * that instant and moves on in real time, so timestamps within a run still increase. Tests pin it;
 * an operator may pin it to replay a day. Unset, it is the system clock.
 */
import { ConfigError } from './exit-codes.js';

export interface Clock {
  now(): Date;
}

export const CLOCK_ENV = 'PERKS_NOW';

export const systemClock: Clock = { now: () => new Date() };

/** A clock that reads `start` now and moves on in real time from there. */
export function clockFrom(start: Date): Clock {
  const origin = performance.now();
  return { now: () => new Date(start.getTime() + Math.floor(performance.now() - origin)) };
}

/** The instant `value` (PERKS_NOW's form) names, or undefined when it names none. */
export function parseNow(value: string): Date | undefined {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const text = day ? `${value}T12:00:00Z` : value;
  if (!day && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return undefined;
  // Date.parse rolls 2026-02-30 over to March: the day written must be the day read.
  if (day && at.toISOString().slice(0, 10) !== value) return undefined;
  return at;
}

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const value = env[CLOCK_ENV];
  if (value === undefined || value === '') return systemClock;
  const at = parseNow(value);
  if (!at)
    throw new ConfigError(
      `${CLOCK_ENV}="${value}" is invalid: expected an ISO 8601 instant (2026-11-22T12:00:00Z) or a day (2026-11-22); unset it to use the system clock`,
    );
  return clockFrom(at);
}

let current: Clock | undefined;

/** The program's clock: PERKS_NOW's when set, else the system's (read once, on first use). */
export function clock(): Clock {
  return (current ??= clockFromEnv());
}

/** Whether the program's clock is pinned (PERKS_NOW, or a clock set in-process) rather than the system's. */
export function clockPinned(): boolean {
  return clock() !== systemClock;
}

/** The current instant by the program's clock. */
export function now(): Date {
  return clock().now();
}

/** Today's UTC day (YYYY-MM-DD) by the program's clock. */
export function todayUtc(): string {
  return now().toISOString().slice(0, 10);
}

/** Replaces the program's clock (in-process tests and embedders); returns the one it replaced. */
export function setClock(next: Clock | undefined): Clock | undefined {
  const before = current;
  current = next;
  return before;
}
