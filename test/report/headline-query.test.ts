/**
 * One rule for test groups everywhere (issue 51): the query docs/analysts.md gives for the finance report's headline,
 * run as written against the warehouse, equals the report's totals per currency to the cent, with a test group
 * present (Acme Staff, EUR, beside a counted group's EUR orders) and a group's month signed off and changed since;
 * the report's CSV gives the same totals by its own columns (is_recognised_revenue, is_test_group).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import { configFrom } from '../../src/config/index.js';
import { extract } from '../../src/extract/index.js';
import { loadReport, openWarehouse, parseMonth, writeRevenueReport } from '../../src/report/index.js';
import { USER_STATUS } from '../../src/sandbox/choices.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { ROOT } from '../transform/helpers.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const RULE = { statuses: ['Complete'] };
const MARK = "-- the finance report's headline";

/** The SQL block of docs/analysts.md that opens with the headline's comment, as an analyst would copy it. */
function headlineQuery(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'analysts.md'), 'utf8');
  const block = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.startsWith(MARK));
  if (!block) throw new Error(`docs/analysts.md has no sql block starting "${MARK}"`);
  return block;
}

test("the docs' headline query equals the report's totals per currency, to the cent, with a test group present and a month signed off", async () => {
  await withSandbox({ today: TODAY }, async (sandbox) => {
    // a counted group's EUR order in October, so that EUR is both counted (group 11) and left out (group 14, a test)
    const uk = sandbox.world.users.inGroup(11).find((u) => u.status === USER_STATUS.active)!;
    sandbox.world.placeOrder(11, '2026-10-14T10:00:00+01:00', uk.id, 'Complete', 'EUR');
    const out = tempOut('perks-headline-');
    const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' });
    const now = new Date(`${TODAY}T12:00:00Z`);
    expect((await extract(config, { output: outputAt(out), now, streams: ['orders'] })).status).toBe('success');
    expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);

    // October signed off for the US group, then one of its orders refunded upstream and read again: the report shows
    // the month as signed, revenue_monthly's current columns the refund
    await closeMonth({ output: outputAt(out), month: '2026-10', group: 12, by: 'A. Controller', rule: RULE });
    const store = sandbox.world.orders;
    const us = sandbox.world.groupIndex(12);
    let refunded = store.lowerBound(Date.parse('2026-10-12T12:00:00Z'));
    while (store.group[refunded] !== us || store.statusOf(refunded) !== 'Complete') refunded++;
    store.setStatus(refunded, 'Refunded');
    // its New York day (EDT, UTC−4, in October), read again alone
    const day = new Date(store.createdAt[refunded] - 4 * 3_600_000).toISOString().slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const reread = await extract(config, {
      output: outputAt(out),
      now,
      streams: ['orders'],
      startDate: day,
      endDate: next,
    });
    expect(reread.status).toBe('success');
    expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);

    const wh = await openWarehouse(out);
    try {
      const report = await loadReport(wh, outputAt(out), parseMonth('2026-10'), undefined, RULE);
      expect(report.testGroups.groups.map((g) => g.groupId)).toEqual([14]);
      const headline = (await wh.all(headlineQuery())).map((r) => ({
        currency: r.order_currency === null ? '' : String(r.order_currency),
        orders: String(r.recognised_orders),
        recognised: String(r.recognised_revenue),
      }));
      const totals = report.totals.map((t) => ({ currency: t.currency, orders: t.orders, recognised: t.recognised }));
      expect(totals.map((t) => t.currency)).toEqual(['AUD', 'EUR', 'GBP', 'USD']);
      expect(headline).toEqual(totals);

      // without the test-group rule the same query counts the test group's EUR: what --include-test-groups reports
      const everyGroup = await wh.all(headlineQuery().replace(' AND NOT is_test_group', ''));
      const counted = await loadReport(wh, outputAt(out), parseMonth('2026-10'), undefined, RULE, undefined, {
        includeTestGroups: true,
      });
      expect(everyGroup.map((r) => String(r.recognised_revenue))).toEqual(counted.totals.map((t) => t.recognised));
      expect(everyGroup.find((r) => r.order_currency === 'EUR')!.recognised_revenue).not.toBe(
        headline.find((r) => r.currency === 'EUR')!.recognised,
      );
      // the signed-off month counts as closed: its current figures (the refund) are not the headline's
      const [usNow] = await wh.all(
        `SELECT sum(group_revenue) AS revenue FROM revenue_monthly WHERE organisation_group_id = 12
        AND month = DATE '2026-10-01' AND is_recognised`,
      );
      expect(String(usNow.revenue)).not.toBe(headline.find((r) => r.currency === 'USD')!.recognised);

      // the report's CSV, summed by its own columns, gives the same totals
      const csv = await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2026-10',
        formats: ['csv'],
        revenueRule: RULE,
      });
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      const fromCsv = await c.runAndReadAll(
        `SELECT order_currency AS currency, CAST(sum(orders) AS VARCHAR) AS orders, CAST(sum(group_revenue) AS VARCHAR) AS recognised
        FROM read_csv($csv, header = true, types = {'group_revenue': 'DECIMAL(18,2)', 'orders': 'BIGINT'})
        WHERE is_recognised_revenue AND NOT is_test_group GROUP BY 1 ORDER BY 1`,
        { csv: csv.files[0] },
      );
      expect(fromCsv.getRowObjectsJson()).toEqual(totals);
      c.closeSync();
      db.closeSync();
    } finally {
      wh.close();
    }
  });
}, 180_000);
