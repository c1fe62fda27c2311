import { describe, expect, test } from 'vitest';
import { extract, shiftDay } from '../../src/extract/index.js';
import { runPipeline } from '../../src/run/index.js';
import { setClock, clockFrom } from '../../src/shared/clock.js';
import { compareOrders, groupsAt, lakeOrders, ordersTruth } from '../support/lake-check.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { withScratch } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

/**
 * The whole job on days the calendar makes awkward: a month's end, both daylight-saving changes in
 * London and New York, the last day of a year, a leap day's month. On each, a full run and the next
 * day's run leave the lake equal to the sandbox's orders, and the run succeeds.
 */
const DAYS = [
  ['the end of February', '2026-02-28'],
  ['New York springs forward', '2026-03-08'],
  ['London springs forward', '2026-03-29'],
  ['London falls back', '2026-10-25'],
  ['New York falls back', '2026-11-01'],
  ['the last day of the year', '2026-12-31'],
] as const;

const noon = (day: string) => new Date(`${day}T12:00:00Z`);

describe('runs on awkward days of the calendar', () => {
  test.each(DAYS)(
    "on %s (%s), a full run and the next day's run leave the lake equal to the platform",
    async (_name, day) => {
      const start = shiftDay(day, -40);
      await withSandbox({ seed: 17, today: day }, (sandbox) =>
        withScratch('calendar', async (scratch) => {
          const out = scratch.dir();
          const config = orgConfig(sandbox, out, { PERKS_START_DATE: start });
          // The program's own clock (build's as-of, write-back stamps) reads the same day as the run.
          const before = setClock(clockFrom(noon(day)));
          try {
            const first = await runPipeline(config, { output: outputAt(out), now: noon(day) });
            expect(first.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
              'extract:success',
              'forget:success',
              'compact:success',
              'build:success',
              'writeback:success',
              'report:success',
            ]);
            expect(
              compareOrders(await lakeOrders(out), ordersTruth(sandbox, groupsAt(sandbox, noon(day)), start)),
            ).toEqual({ missing: 0, wrong: 0, duplicated: 0 });

            sandbox.advance(1);
            const next = shiftDay(day, 1);
            setClock(clockFrom(noon(next)));
            const second = await extract(config, { output: outputAt(out), now: noon(next), streams: ['orders'] });
            expect(second.status).toBe('success');
            // Within the lookback (7 days), where a run promises the platform's statuses; older days keep theirs.
            const recent = (rows: Awaited<ReturnType<typeof lakeOrders>>) =>
              rows.filter((r) => r.order_date >= shiftDay(next, -7));
            expect(
              compareOrders(
                recent(await lakeOrders(out)),
                recent(ordersTruth(sandbox, groupsAt(sandbox, noon(next)), start)),
              ),
            ).toEqual({ missing: 0, wrong: 0, duplicated: 0 });
            expect(
              compareOrders(await lakeOrders(out), ordersTruth(sandbox, groupsAt(sandbox, noon(next)), start)).missing,
            ).toBe(0);
          } finally {
            setClock(before);
          }
        }),
      );
    },
    120_000,
  );
});
