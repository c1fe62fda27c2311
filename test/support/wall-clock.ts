/**
 * The system's wall clock, for the instants the program itself reads on it and a test must match: a lock's
 * heartbeat (src/lake/lock.ts judges its age on the wall clock), a Retry-After date (an HTTP date, read by the
 * client against its own clock). Never a business date: those come from the program's clock, pinned by
 * vitest.config.ts (src/shared/clock.ts). Elapsed time is `performance.now()`. Besides this file, only the
 * files eslint.config.js names (WALL_CLOCK_FILES) may read the wall clock in test/.
 */

/** The wall clock's instant `offsetMs` from now (negative: that long ago). */
export function wallClock(offsetMs = 0): Date {
  return new Date(Date.now() + offsetMs);
}
