/** The oracle's local day (lake-check.ts): worked out by hand at local midnights and clock changes. */
import { expect, test } from 'vitest';
import { localDayOf } from './lake-check.js';

test("an instant's local day in the group's time zone, either side of local midnight, on clock-change days too", () => {
  const cases: [string, string, string][] = [
    // London: GMT until 2026-03-29 01:00 UTC, then BST (UTC+1) until 2026-10-25 01:00 UTC
    ['2026-03-28T23:59:59.999Z', 'Europe/London', '2026-03-28'],
    ['2026-03-29T00:00:00.000Z', 'Europe/London', '2026-03-29'],
    ['2026-06-30T22:59:59.999Z', 'Europe/London', '2026-06-30'],
    ['2026-06-30T23:00:00.000Z', 'Europe/London', '2026-07-01'],
    // New York: EDT (UTC-4) until 2026-11-01 06:00 UTC, then EST (UTC-5)
    ['2026-11-01T03:59:59.999Z', 'America/New_York', '2026-10-31'],
    ['2026-11-01T04:00:00.000Z', 'America/New_York', '2026-11-01'],
    ['2026-11-02T04:59:59.999Z', 'America/New_York', '2026-11-01'],
    ['2026-11-02T05:00:00.000Z', 'America/New_York', '2026-11-02'],
    // Sydney: AEDT (UTC+11) until 2026-04-05 03:00 local, then AEST (UTC+10)
    ['2026-04-04T12:59:59.999Z', 'Australia/Sydney', '2026-04-04'],
    ['2026-04-04T13:00:00.000Z', 'Australia/Sydney', '2026-04-05'],
    ['2026-04-05T13:59:59.999Z', 'Australia/Sydney', '2026-04-05'],
    ['2026-04-05T14:00:00.000Z', 'Australia/Sydney', '2026-04-06'],
    // a year end, UTC
    ['2026-12-31T23:59:59.999Z', 'UTC', '2026-12-31'],
    ['2027-01-01T00:00:00.000Z', 'UTC', '2027-01-01'],
  ];
  for (const [instant, zone, day] of cases)
    expect(localDayOf(Date.parse(instant), zone), `${instant} ${zone}`).toBe(day);
});
