import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { readFile } from 'node:fs/promises';
import { writeRevenueReport } from '../../src/report/index.js';
import { withSandbox } from '../support/sandbox.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { TODAY } from './scenario.js';
import { configFrom } from '../../src/config/index.js';
import { unlabelled } from '../support/report-html.js';
import { outputAt } from '../../src/output/index.js';

describe("reconciliation against the platform's own statistics", () => {
  test('a consistent world matches (or is explained); stale statistics name the user and the amounts', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-platform-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' });
      expect(
        (
          await extract(config, {
            output: outputAt(out),
            now: new Date(`${TODAY}T12:00:00Z`),
            streams: ['orders', 'redemption_stats'],
          })
        ).status,
      ).toBe('success');
      expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
      const wh = join(out, 'warehouse.duckdb');
      const results = await query(
        wh,
        `SELECT result, explanation, count(*) AS n FROM reconciliation_platform WHERE month = DATE '2026-10-01' GROUP BY ALL ORDER BY ALL`,
      );
      expect(results.filter((r) => r.result === 'differs')).toEqual([]);
      expect(Number(results.find((r) => r.result === 'matched')?.n)).toBeGreaterThan(20);
      const agreeing = await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2026-10',
        formats: ['md'],
        revenueRule: { statuses: ['Complete'] },
      });
      expect(await readFile(agreeing.files[0], 'utf8')).toMatch(
        /the platform's statistics AGREE with our orders: \d+ users matched, \d+ explained, 0 differ\./,
      );

      // A Complete October order, away from the month's edges, of a user the statistics know: refunded upstream,
      // and only the orders are re-read, so the platform's statistics in the lake are now older than the orders.
      // The user has no order on a local day at October's edges (the last of September to the first of November):
      // such an order may be in either UTC month, so a difference up to its figures is explained (month edge).
      const [pick] = await query(
        wh,
        `SELECT o.organisation_group_id AS g, o.order_id, o.user_id, o.face_value, o.order_total_paid, o.order_saving
        FROM stg_orders o JOIN reconciliation_platform r ON r.organisation_group_id = o.organisation_group_id AND r.user_id = o.user_id AND r.month = DATE '2026-10-01'
        WHERE o.order_status = 'Complete' AND o.order_date BETWEEN DATE '2026-10-05' AND DATE '2026-10-25' AND r.result = 'matched'
          AND NOT EXISTS (SELECT 1 FROM stg_orders e WHERE e.organisation_group_id = o.organisation_group_id AND e.user_id = o.user_id
            AND e.order_date IN (DATE '2026-09-30', DATE '2026-10-01', DATE '2026-10-31', DATE '2026-11-01'))
        ORDER BY o.order_id LIMIT 1`,
      );
      sandbox.world.orders.setStatus(Number(pick.order_id) - 700_001, 'Refunded');
      expect(
        (
          await extract(config, {
            output: outputAt(out),
            now: new Date(`${TODAY}T13:00:00Z`),
            streams: ['orders'],
            startDate: '2026-10-01',
          })
        ).status,
      ).toBe('success');
      expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
      const differs = await query(
        wh,
        `SELECT organisation_group_id AS g, user_id, platform_egift_orders - lake_complete_orders AS egift_orders, face_value_difference, cost_difference, savings_difference, orders_difference
        FROM reconciliation_platform WHERE result = 'differs'`,
      );
      const report = await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2026-10',
        group: Number(pick.g),
        formats: ['md', 'html'],
        revenueRule: { statuses: ['Complete'] },
      });
      const md = await readFile(report.files[1], 'utf8');
      // both kinds the statistics tell apart differ: one Complete order more there, one order not Complete more here,
      // ours named by status (the user's Refunded orders of October, the one refunded upstream among them)
      const [ours] = await query(
        wh,
        `SELECT count(*) FILTER (WHERE order_status <> 'Complete') AS other, count(*) FILTER (WHERE order_status = 'Refunded') AS refunded
        FROM stg_orders WHERE organisation_group_id = ${Number(pick.g)} AND user_id = ${Number(pick.user_id)}
          AND order_date BETWEEN DATE '2026-10-01' AND DATE '2026-10-31'`,
      );
      const line = new RegExp(
        `the platform's statistics DISAGREE with our orders for 1 user \\(\\d+ users matched, \\d+ explained\\): user ${pick.user_id} \\(Complete orders: platform (\\d+), ours (\\d+); face value platform − ours ${String(pick.face_value).replace('.', '\\.')}; orders not Complete: platform (\\d+), ours ${ours.other} \\(([^)]*)\\)\\)\\.`,
      ).exec(md);
      expect(line, md).not.toBeNull();
      const [, platformComplete, oursComplete, platformOther, statuses] = line!;
      expect(Number(platformComplete) - Number(oursComplete)).toBe(1);
      expect(Number(ours.other) - Number(platformOther)).toBe(1);
      expect(statuses.split(', ')).toContain(`${ours.refunded} Refunded`);
      expect(unlabelled(await readFile(report.files[0], 'utf8'))).toContain(`<th scope="row">${pick.user_id}</th>`);
      expect(differs).toEqual([
        {
          g: pick.g,
          user_id: pick.user_id,
          egift_orders: '1',
          face_value_difference: pick.face_value,
          cost_difference: pick.order_total_paid,
          savings_difference: pick.order_saving,
          orders_difference: '0',
        },
      ]);
    });
  }, 180_000);
});
