import { describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { withSandbox } from '../support/sandbox.js';
import { lakeOrders, orgConfig, tempOut } from '../extract/helpers.js';
import { octoberCompleteOrders, TODAY } from './scenario.js';

describe('a periodic deep re-read finds refunds later than the lookback', () => {
  test('with PERKS_DEEP_REREAD_DAYS=7 the run a week later re-reads the open and previous month, and --plan says so and what it costs', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-deep-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01', PERKS_DEEP_REREAD_DAYS: '7' });
      const at = (day: string) => new Date(`${day}T12:00:00Z`);
      expect((await extract(config, { now: at(TODAY), streams: ['orders'] })).status).toBe('success');
      const group = sandbox.world.groups[0].id;
      const [i] = octoberCompleteOrders(sandbox, group, 1, 5);
      sandbox.world.orders.setStatus(i, 'Refunded');
      const status = async () => (await lakeOrders(out)).find((o) => o.order_id === 700_001 + i)?.order_status;

      sandbox.advance(3);
      expect((await extract(config, { now: at(sandbox.world.today), streams: ['orders'] })).status).toBe('success');
      expect(await status()).toBe('Complete'); // the lookback does not reach October

      sandbox.advance(4);
      const plan = await extract(config, { now: at(sandbox.world.today), streams: ['orders'], planOnly: true });
      const row = plan.plan!.rows.find((r) => r.stream === 'orders' && r.group === group)!;
      expect(row.detail).toMatch(/^2026-10-01 to 2026-11-29 \(exclusive\), 0 already done, a deep re-read of the open and previous month/);
      expect(row.units).toBe(59);
      expect((await extract(config, { now: at(sandbox.world.today), streams: ['orders'] })).status).toBe('success');
      expect(await status()).toBe('Refunded');
      // the next run is back to the lookback
      const next = await extract(config, { now: at(sandbox.world.today), streams: ['orders'], planOnly: true });
      expect(next.plan!.rows.find((r) => r.stream === 'orders' && r.group === group)!.detail).not.toContain('deep');
    });
  }, 120_000);
});
