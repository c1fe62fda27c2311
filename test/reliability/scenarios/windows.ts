/**
 * 4. Window boundaries: the convention (closed-open, in the group's timezone) is written down; orders
 * exactly on a local midnight and on daylight-saving-change days land once, on the right local day;
 * and for random splits of a range (fast-check), the windows of the parts are the windows of the
 * whole, their API bounds meet to the second, and the sandbox's orders over the parts are the orders
 * over the whole, each once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { apiBounds, dayWindows, extract, localMidnight, shiftDay } from '../../../src/extract/index.js';
import { ROOT } from '../../support/cli.js';
import { compareOrders, groupsAt, lakeOrders, ordersTruth } from '../../support/lake-check.js';
import { orgConfig, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { propertyFailure } from '../../support/random.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const NOW = new Date(`${TODAY}T12:00:00Z`);
/** Covers the autumn changes of London, Paris and New York and the spring change of Sydney. */
const START = '2026-09-28';
const ZONES = [
  'Europe/London',
  'America/New_York',
  'Australia/Sydney',
  'Europe/Paris',
  'UTC',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'America/St_Johns',
];

export async function windowsScenario(o: ScenarioOptions & { splits: number }): Promise<Row[]> {
  return withSandbox({ seed: 91, today: TODAY }, async (sandbox) => {
    const rows: Row[] = [];
    const docs = readFileSync(join(ROOT, 'docs', 'reference', 'extract.md'), 'utf8');
    const written =
      /Closed-open \[start, end\) in the group's timezone/.test(docs) &&
      /closed-open \[start, end\), in the group's own timezone/.test(
        readFileSync(join(ROOT, 'src', 'extract', 'date-windows.ts'), 'utf8'),
      );
    rows.push(
      row(
        'window convention written down',
        1,
        written ? [] : ['docs/reference/extract.md or src/extract/date-windows.ts no longer states it'],
        written
          ? "closed-open [start, end), whole local days of the group's timezone (docs/reference/extract.md, date-windows.ts)"
          : 'missing',
      ),
    );

    // Every order of the range, against the lake: the ones on a boundary second and on DST-change days counted.
    await withScratch('windows', async (scratch) => {
      const out = scratch.dir();
      await extract(orgConfig(sandbox, out, { PERKS_START_DATE: START }), {
        output: outputAt(out),
        now: NOW,
        streams: ['orders'],
      });
      const groups = groupsAt(sandbox, NOW);
      const truth = ordersTruth(sandbox, groups, START);
      const c = compareOrders(await lakeOrders(out), truth);
      let onBoundary = 0;
      let onDstDays = 0;
      for (const g of groups) {
        for (const w of dayWindows(START, g.upperDay, g.timezone)) {
          const dst = w.end.getTime() - w.start.getTime() !== 86_400_000;
          for (const ord of sandbox.world.ordersOf(g.id, { from: w.start.getTime(), to: w.end.getTime() - 1 })) {
            if (ord.created_at === w.start.getTime()) onBoundary += 1;
            if (dst) onDstDays += 1;
          }
        }
      }
      const problems = [
        ...(c.missing || c.wrong || c.duplicated
          ? [`missing ${c.missing}, on the wrong day or changed ${c.wrong}, twice ${c.duplicated}`]
          : []),
      ];
      if (!onBoundary || !onDstDays)
        problems.push(`the sandbox gave ${onBoundary} boundary and ${onDstDays} DST-day orders: nothing was tested`);
      rows.push(
        row(
          'orders on boundaries and DST days land once',
          truth.length,
          problems,
          `${truth.length} orders (${onBoundary} exactly at a local midnight, ${onDstDays} on DST-change days): missing ${c.missing}, misdated ${c.wrong}, twice ${c.duplicated}`,
        ),
      );
    });

    rows.push(randomSplits(sandbox, o));
    return rows;
  });
}

/** A range cut at random days: the parts' windows are the whole's, bounds meet to the second, orders once. */
function randomSplits(
  sandbox: Parameters<Parameters<typeof withSandbox>[1]>[0],
  o: ScenarioOptions & { splits: number },
): Row {
  const problems: string[] = [];
  let windows = 0;
  let orders = 0;
  const day = (n: number) => shiftDay('2026-01-01', n);
  const failure = propertyFailure(() =>
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 60 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 59 }), { maxLength: 8 }),
        (zone, from, length, cuts) => {
          const start = day(from);
          const end = day(from + length);
          const points = [
            start,
            ...cuts
              .filter((c) => c < length)
              .sort((a, b) => a - b)
              .map((c) => day(from + c)),
            end,
          ];
          const parts = points.slice(1).flatMap((p, i) => dayWindows(points[i], p, zone));
          const whole = dayWindows(start, end, zone);
          windows += parts.length;
          const same =
            parts.length === whole.length &&
            parts.every(
              (w, i) =>
                w.startDay === whole[i].startDay &&
                w.start.getTime() === whole[i].start.getTime() &&
                w.end.getTime() === whole[i].end.getTime(),
            );
          if (!same)
            problems.push(
              `${zone} ${start}..${end} cut at ${cuts.join(',')}: the parts' windows differ from the whole's`,
            );
          // Consecutive windows meet exactly: API bounds (inclusive, whole seconds) neither gap nor overlap.
          for (let i = 1; i < parts.length; i++) {
            const prevTo = Date.parse(`${apiBounds(parts[i - 1], 'UTC').to.replace(' ', 'T')}Z`);
            const nextFrom = Date.parse(`${apiBounds(parts[i], 'UTC').from.replace(' ', 'T')}Z`);
            if (nextFrom - prevTo !== 1000)
              problems.push(
                `${zone}: ${parts[i - 1].startDay} and ${parts[i].startDay} do not meet (${prevTo} → ${nextFrom})`,
              );
            if (parts[i].start.getTime() !== localMidnight(parts[i].startDay, zone).getTime())
              problems.push(`${zone}: ${parts[i].startDay} does not start at local midnight`);
          }
          // The sandbox's orders through the API bounds of the parts: each of the whole range's orders once.
          const group = sandbox.world.groups[from % sandbox.world.groups.length];
          const seen = new Map<number, number>();
          for (const w of parts) {
            const b = apiBounds(w, 'UTC');
            for (const ord of sandbox.world.ordersOf(group.id, { from: b.from, to: b.to }))
              seen.set(ord.order_id, (seen.get(ord.order_id) ?? 0) + 1);
          }
          const all = sandbox.world.ordersOf(group.id, {
            from: whole[0]?.start.getTime() ?? 0,
            to: (whole.at(-1)?.end.getTime() ?? 1) - 1,
          });
          orders += all.length;
          const twice = [...seen.values()].filter((n) => n > 1).length;
          if (seen.size !== all.length || twice)
            problems.push(
              `${zone} ${start}..${end}: ${all.length} orders in the whole range, ${seen.size} through the parts, ${twice} twice`,
            );
          return problems.length === 0;
        },
      ),
      { numRuns: o.splits, seed: o.seed },
    ),
  );
  if (failure && !problems.length) problems.push(failure);
  return row(
    'random splits of a range (fast-check)',
    o.splits,
    problems.slice(0, 3),
    `${o.splits} ranges in ${ZONES.length} zones cut at random days: ${windows} windows, ${orders} orders; union = one window: ${problems.length ? 'NO' : 'yes'}, gaps or overlaps ${problems.length}`,
  );
}
