import { describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { StateStore } from '../../src/lake/index.js';
import { withSandbox } from '../support/sandbox.js';
import { lakeOrders } from '../support/lake-check.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { octoberCompleteOrders, TODAY } from './scenario.js';
import { outputAt } from '../../src/output/index.js';

const at = (day: string) => new Date(`${day}T12:00:00Z`);

describe('a periodic deep re-read finds refunds later than the lookback', () => {
  test('by default (every 7 days) the run a week later re-reads the open and previous month, and --plan says so and what it costs', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-deep-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' });
      expect(config.deepRereadDays).toBe(7);
      expect((await extract(config, { output: outputAt(out), now: at(TODAY), streams: ['orders'] })).status).toBe(
        'success',
      );
      const group = sandbox.world.groups[0].id;
      const [i] = octoberCompleteOrders(sandbox, group, 1, 5);
      sandbox.world.orders.setStatus(i, 'Refunded');
      const status = async () => (await lakeOrders(out)).find((o) => o.order_id === 700_001 + i)?.order_status;

      sandbox.advance(3);
      const early = await extract(config, {
        output: outputAt(out),
        now: at(sandbox.world.today),
        streams: ['orders'],
        planOnly: true,
      });
      expect(early.plan!.rows.find((r) => r.stream === 'orders' && r.group === group)!.detail).toMatch(
        /; next deep re-read from 2026-11-(29|30)$/,
      );
      expect(
        (await extract(config, { output: outputAt(out), now: at(sandbox.world.today), streams: ['orders'] })).status,
      ).toBe('success');
      expect(await status()).toBe('Complete'); // the lookback does not reach October

      sandbox.advance(4);
      const plan = await extract(config, {
        output: outputAt(out),
        now: at(sandbox.world.today),
        streams: ['orders'],
        planOnly: true,
      });
      const row = plan.plan!.rows.find((r) => r.stream === 'orders' && r.group === group)!;
      // the lookback alone would start at the last watermark (3 days after TODAY) less the lookback
      const lookbackFrom = new Date(at(TODAY).getTime() + (3 - config.lookbackDays) * 86_400_000)
        .toISOString()
        .slice(0, 10);
      const extra = Math.round((Date.parse(lookbackFrom) - Date.parse('2026-10-01')) / 86_400_000);
      expect(row.detail).toMatch(
        /^2026-10-01 to 2026-11-29 \(exclusive\), 0 already done, a deep re-read of the open and previous month \(PERKS_DEEP_REREAD_DAYS\): (\d+) windows, ~\1 calls more than the lookback$/,
      );
      expect(row.units).toBe(59);
      expect(Number(/: (\d+) windows/.exec(row.detail)![1])).toBe(extra);
      expect(
        (await extract(config, { output: outputAt(out), now: at(sandbox.world.today), streams: ['orders'] })).status,
      ).toBe('success');
      expect(await status()).toBe('Refunded');
      expect((await new StateStore(out).read<{ deep_at?: string }>('orders', String(group)))?.deep_at).toBe(
        '2026-11-29',
      );
      // the next run is back to the lookback
      const next = await extract(config, {
        output: outputAt(out),
        now: at(sandbox.world.today),
        streams: ['orders'],
        planOnly: true,
      });
      expect(next.plan!.rows.find((r) => r.stream === 'orders' && r.group === group)!.detail).not.toContain(
        'a deep re-read',
      );
    });
  }, 300_000);

  test('a daily schedule pays the deep re-read once a week; PERKS_DEEP_REREAD_DAYS=0 turns it off, 3 makes it every third day', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const runs = (every: string | undefined) => {
        const out = tempOut('perks-deep-daily-');
        const config = orgConfig(sandbox, out, {
          PERKS_START_DATE: '2026-10-01',
          ...(every === undefined ? {} : { PERKS_DEEP_REREAD_DAYS: every }),
        });
        return { out, config };
      };
      const schedules = { default: runs(undefined), off: runs('0'), three: runs('3') };
      const deepDays: Record<string, string[]> = { default: [], off: [], three: [] };
      const calls: Record<string, number[]> = { default: [], off: [], three: [] };
      let retried = 0;
      for (let day = 0; day < 9; day += 1) {
        if (day > 0) sandbox.advance(1);
        for (const [name, s] of Object.entries(schedules)) {
          const plan = await extract(s.config, {
            output: outputAt(s.out),
            now: at(sandbox.world.today),
            streams: ['orders'],
            planOnly: true,
          });
          if (plan.plan!.rows.some((r) => r.stream === 'orders' && r.detail.includes('a deep re-read')))
            deepDays[name].push(sandbox.world.today);
          const result = await extract(s.config, {
            output: outputAt(s.out),
            now: at(sandbox.world.today),
            streams: ['orders'],
          });
          expect(result.status).toBe('success');
          // the requests the schedule needs: a retry a busy machine caused (a timeout, a 429) is not its cost
          const orders = result.streams.find((st) => st.name === 'orders')!;
          calls[name].push(orders.calls - orders.retries);
          retried += orders.retries;
        }
      }
      expect(deepDays.default).toEqual(['2026-11-29']);
      expect(deepDays.off).toEqual([]);
      expect(deepDays.three).toEqual(['2026-11-25', '2026-11-28']);
      // an ordinary next-day run costs what it cost before the setting existed (the "off" schedule's calls)
      const ordinary = calls.default.filter((_, d) => d > 0 && d !== 7);
      expect(ordinary).toEqual(calls.off.filter((_, d) => d > 0 && d !== 7));
      expect(calls.default[7]).toBeGreaterThan(calls.off[7]);
      console.log(
        `deep re-read: daily calls (default) ${calls.default.join(', ')}; off ${calls.off.join(', ')}; ${retried} retried`,
      );
    });
  }, 600_000);

  test('it re-reads only days read before: a history that starts mid-month (PERKS_START_DATE) is not backfilled by it', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-deep-start-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-15' });
      expect((await extract(config, { output: outputAt(out), now: at(TODAY), streams: ['orders'] })).status).toBe(
        'success',
      );
      sandbox.advance(7);
      const plan = await extract(config, {
        output: outputAt(out),
        now: at(sandbox.world.today),
        streams: ['orders'],
        planOnly: true,
      });
      for (const row of plan.plan!.rows.filter((r) => r.stream === 'orders'))
        expect(row.detail).toMatch(/^2026-10-15 to 2026-11-29 \(exclusive\), 0 already done, a deep re-read/);
      expect(
        (await extract(config, { output: outputAt(out), now: at(sandbox.world.today), streams: ['orders'] })).status,
      ).toBe('success');
      const days = (await lakeOrders(out)).map((o) => String(o.order_date).slice(0, 10)).sort();
      expect(days.length).toBeGreaterThan(0);
      expect(days[0] >= '2026-10-15', `first order day in the lake: ${days[0]}`).toBe(true);
    });
  }, 300_000);
});
