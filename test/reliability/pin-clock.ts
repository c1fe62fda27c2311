// The suite never reads the calendar: the program's clock is pinned (PERKS_NOW) as under vitest, unless
// the caller pins another. Imported first by suite.ts, before any module reads the clock.
process.env.PERKS_NOW ??= '2026-11-22T12:00:00Z';
