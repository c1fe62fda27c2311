import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { extractAndBuild, octoberCompleteOrders, TODAY } from './scenario.js';

describe('order history', () => {
  test('a refund observed by a re-read is a second version; the first is kept with when it was first and last seen', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-history-');
      const group = sandbox.world.groups[0].id;
      await extractAndBuild(sandbox, out, `${TODAY}T12:00:00Z`);
      const refunded = octoberCompleteOrders(sandbox, group, 3);
      expect(refunded).toHaveLength(3);
      for (const i of refunded) sandbox.world.orders.setStatus(i, 'Refunded');
      // The same windows again (the lake replaces them): the history keeps what they held.
      await extractAndBuild(sandbox, out, `${TODAY}T13:00:00Z`);
      await extractAndBuild(sandbox, out, `${TODAY}T14:00:00Z`);
      const wh = join(out, 'warehouse.duckdb');
      const ids = refunded.map((i) => 700_001 + i);
      const rows = await query(
        wh,
        `SELECT order_id, version, order_status, group_revenue, strftime(valid_from, '%H:%M') AS from_, strftime(last_seen_at, '%H:%M') AS seen, strftime(valid_to, '%H:%M') AS to_, is_current
        FROM int_order_versions WHERE organisation_group_id = ${group} AND order_id IN (${ids.join(', ')}) ORDER BY order_id, version`,
      );
      const truth = refunded.map((i) => sandbox.world.orders.get(i));
      expect(rows).toEqual(
        truth.flatMap((o) => {
          const revenue = (o.group_revenue / 100).toFixed(2);
          return [
            {
              order_id: String(o.order_id),
              version: '1',
              order_status: 'Complete',
              group_revenue: revenue,
              from_: '12:00',
              seen: '12:00',
              to_: '13:00',
              is_current: false,
            },
            {
              order_id: String(o.order_id),
              version: '2',
              order_status: 'Refunded',
              group_revenue: revenue,
              from_: '13:00',
              seen: '14:00',
              to_: null,
              is_current: true,
            },
          ];
        }),
      );
      // Every other order has exactly one version, current, equal to the staged order.
      const [others] = await query(
        wh,
        `SELECT count(*) AS versions, count(*) FILTER (WHERE NOT is_current) AS old,
          (SELECT count(*) FROM stg_orders) AS orders
        FROM int_order_versions`,
      );
      expect(others).toEqual({ versions: String(Number(others.orders) + 3), old: '3', orders: others.orders });
      const [differs] = await query(
        wh,
        `SELECT count(*) AS n FROM stg_orders s JOIN int_order_versions v USING (organisation_group_id, order_id)
        WHERE v.is_current AND (s.order_status IS DISTINCT FROM v.order_status OR s.group_revenue IS DISTINCT FROM v.group_revenue)`,
      );
      expect(differs.n).toBe('0');
    });
  }, 300_000);
});
