/**
 * A signed-off month never stops the build, whatever happens to it afterwards (issue 22). October is closed for
 * one group (another stays open) while it still has Pending orders; then the platform changes October in every
 * way a closed month can change: the Pending orders complete or are cancelled (a status present at the close and
 * gone now), an order takes a status never seen before, a late order arrives, money is corrected, an order moves
 * to another currency and another to an offer the month had no order of, and one order disappears from the API.
 * Every build succeeds; as closed + adjustments = as now in every cell; every change is booked once, in the open
 * month; the closed report keeps its bytes. Then October is reopened and closed again, and changed once more.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeMonth, reopenMonth } from '../../src/close/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { filesOf, toLegacyLayout } from '../compact/helpers.js';
import { query, ROOT } from '../transform/helpers.js';
import { extractAndBuild, octoberCompleteOrders, OCTOBER, TODAY } from './scenario.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };
const at = (time: string) => `${TODAY}T${time}Z`;

/**
 * Per group, currency and status of October: as closed + the adjustments' moves − as now. No row when the
 * month reconciles. A change moves an order out of its before cell (when it had one) into its after cell (when
 * it has one now).
 */
const OFF = (group: number) => `
WITH closed AS (
  SELECT order_currency AS c, order_status AS s, orders_as_closed AS n, group_revenue_as_closed AS r, face_value_as_closed AS f
  FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' AND is_closed
), now AS (
  SELECT order_currency AS c, order_status AS s, orders AS n, group_revenue AS r, face_value AS f
  FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'
), moves AS (
  SELECT before_currency AS c, before_status AS s, -1 AS n, -before_group_revenue AS r, -before_face_value AS f
  FROM revenue_adjustments WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' AND before_status IS NOT NULL
  UNION ALL
  SELECT order_currency, after_status, 1, after_group_revenue, after_face_value
  FROM revenue_adjustments WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' AND after_status IS NOT NULL
), sides AS (
  SELECT * FROM closed UNION ALL SELECT * FROM moves UNION ALL SELECT c, s, -n, -r, -f FROM now
)
SELECT c, s, sum(n) AS orders_off, sum(r) AS revenue_off, sum(f) AS face_value_off FROM sides GROUP BY ALL
HAVING sum(n) <> 0 OR sum(r) <> 0 OR sum(f) <> 0 ORDER BY ALL`;

describe('a signed-off month never stops the build', () => {
  let sandbox: Sandbox;
  let out: string;
  let group: number;
  let open: number;
  const changed = new Map<number, string>();
  let closedCsv: string;
  let closedMd: string;

  const report = async (month: string) => {
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month,
      group,
      revenueRule: RULE,
    });
    const [, csv, md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    return { csv, md };
  };
  const wh = () => join(out, 'warehouse.duckdb');
  const orderId = (i: number) => sandbox.world.orders.get(i).order_id;

  beforeAll(async () => {
    sandbox = await testSandbox({ today: TODAY });
    out = tempOut('perks-closed-changes-');
    [group, open] = sandbox.world.groups.slice(0, 2).map((g) => g.id);
    const store = sandbox.world.orders;
    const [pendingA, pendingB, late, disputed, corrected, recurrenced, reoffered, vanished] = octoberCompleteOrders(
      sandbox,
      group,
      8,
    );
    // at the close: two orders still Pending (the only ones of that status), one not shown yet
    store.setStatus(pendingA, 'Pending');
    store.setStatus(pendingB, 'Pending');
    store.setHidden(late, true);
    await extractAndBuild(sandbox, out, at('12:00:00'));
    setClock(clockFrom(new Date(at('12:30:00'))));
    await closeMonth({ output: outputAt(out), month: OCTOBER, group, by: 'A. Controller', force: true, rule: RULE });
    ({ csv: closedCsv, md: closedMd } = await report(OCTOBER));

    // after the close, upstream
    store.setStatus(pendingA, 'Complete');
    store.setStatus(pendingB, 'Cancelled');
    store.setStatus(disputed, 'Disputed'); // a status the platform never sent before
    store.setHidden(late, false);
    store.revenue[corrected] += 250;
    store.face[corrected] += 500;
    const currency = store.currencyOf(recurrenced);
    store.currency[recurrenced] = ['GBP', 'USD', 'AUD', 'EUR'].indexOf(currency === 'EUR' ? 'USD' : 'EUR');
    const used = new Set<number>();
    for (const i of octoberCompleteOrders(sandbox, group, 10_000)) used.add(store.offer[i]);
    store.offer[reoffered] = sandbox.world.offers.findIndex((_, k) => !used.has(k));
    store.setHidden(vanished, true); // gone from the API
    for (const [i, kind] of [
      [pendingA, 'status'],
      [pendingB, 'status'],
      [disputed, 'status'],
      [late, 'late order'],
      [corrected, 'money'],
      [recurrenced, 'money'],
      [reoffered, 'offer'],
      [vanished, 'removed'],
    ] as const)
      changed.set(orderId(i), kind);
    await extractAndBuild(sandbox, out, at('13:00:00'));
    setClock(clockFrom(new Date(at('14:00:00'))));
  }, 600_000);

  afterAll(async () => {
    setClock(undefined);
    await sandbox?.close();
  });

  test('the build after the changes succeeds, and again the next day', async () => {
    // extractAndBuild throws on a failed build; a second build as of a later day reads the same lake
    const next = await buildWarehouse({ output: outputAt(out), asOf: '2026-11-23' });
    expect(next.error).toBeUndefined();
    expect(next.ok).toBe(true);
  });

  test('as closed + adjustments = as now, in every currency and status of the closed month', async () => {
    expect(await query(wh(), OFF(group))).toEqual([]);
    // the status present at the close and gone now keeps its row, with zero current figures
    const [pending] = await query(
      wh(),
      `SELECT orders, orders_as_closed FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' AND order_status = 'Pending'`,
    );
    expect(pending).toEqual({ orders: '0', orders_as_closed: '2' });
  });

  test('every change is booked once, in the open month, with its kind', async () => {
    const rows = await query(
      wh(),
      `SELECT order_id, strftime(booked_month, '%Y-%m') AS booked, adjustment_kind AS kind FROM revenue_adjustments
       WHERE organisation_group_id = ${group} ORDER BY order_id`,
    );
    const expected = [...changed.entries()]
      .map(([id, kind]) => ({
        order_id: String(id),
        booked: '2026-11',
        // an offer change moves no money and no status: it shows only in revenue_offers_monthly
        kind: kind === 'offer' ? undefined : kind,
      }))
      .filter((r) => r.kind !== undefined)
      .sort((a, b) => Number(a.order_id) - Number(b.order_id));
    expect(rows).toEqual(expected);
  });

  test('a lake whose history is in the earlier day layout books the same adjustments', async () => {
    // revenue_adjustments reads only the closed months' folders of the history; day folders have no month
    const legacy = tempOut('perks-closed-changes-legacy-');
    cpSync(out, legacy, { recursive: true });
    await toLegacyLayout(legacy, 'order_versions');
    expect(filesOf(legacy, 'order_versions').every((f) => f.includes('/order_date='))).toBe(true);
    const built = await buildWarehouse({ output: outputAt(legacy), asOf: TODAY, full: true });
    expect(built.error).toBeUndefined();
    const all = 'SELECT * FROM revenue_adjustments ORDER BY ALL';
    const rows = await query(wh(), all);
    expect(rows.length).toBe(7);
    expect(await query(join(legacy, 'warehouse.duckdb'), all)).toEqual(rows);
  });

  test('the group left open has no adjustments and no closed row', async () => {
    const [row] = await query(
      wh(),
      `SELECT (SELECT count(*) FROM revenue_adjustments WHERE organisation_group_id = ${open}) AS adjustments,
              (SELECT count(*) FROM revenue_monthly WHERE organisation_group_id = ${open} AND is_closed) AS closed`,
    );
    expect(row).toEqual({ adjustments: '0', closed: '0' });
  });

  test("November's report books each currency's own change: totals per currency = October now − as closed", async () => {
    await report('2026-11');
    const csv = await readFile(join(out, 'reports', 'sections', `revenue-2026-11-g${group}-adjustments.csv`), 'utf8');
    const [header, ...lines] = csv.trim().split('\r\n');
    const columns = header.split(',');
    const booked = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [columns[i], v])));
    const truth = await query(
      wh(),
      `SELECT order_currency AS currency, sum(group_revenue - group_revenue_as_closed)::DECIMAL(18,2)::VARCHAR AS revenue,
         sum(CASE WHEN order_status = 'Complete' THEN group_revenue - group_revenue_as_closed ELSE 0 END)::DECIMAL(18,2)::VARCHAR AS recognised
       FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' GROUP BY 1 ORDER BY 1`,
    );
    expect(
      booked.map((b) => ({
        currency: b.order_currency,
        revenue: b.group_revenue_change,
        recognised: b.recognised_revenue_change,
      })),
    ).toEqual(truth);
    expect(booked.reduce((n, b) => n + Number(b.removed_orders), 0)).toBe(1);
    expect(booked.reduce((n, b) => n + Number(b.changes), 0)).toBe(7);
  });

  test('the closed report keeps its bytes', async () => {
    const again = await report(OCTOBER);
    expect(again.csv).toBe(closedCsv);
    expect(again.md).toBe(closedMd);
  });

  test('a rule that breaks on a signed-off month names the month, its close, and since when the marts are kept', async () => {
    const sqlDir = join(mkdtempSync(join(tmpdir(), 'perks-sql-')), 'sql');
    cpSync(join(ROOT, 'sql'), sqlDir, { recursive: true });
    writeFileSync(
      join(sqlDir, 'tests', 'nothing_closed.sql'),
      '-- model: revenue_monthly\nselect organisation_group_id, month, order_status from revenue_monthly where is_closed\n',
    );
    const failed = await buildWarehouse({ output: outputAt(out), sqlDir, asOf: TODAY });
    rmSync(join(sqlDir, '..'), { recursive: true, force: true });
    expect(failed.ok).toBe(false);
    expect(failed.error).toMatch(
      /^data test failed: revenue_monthly · nothing_closed \(sql\/tests\/nothing_closed\.sql\)/,
    );
    expect(failed.impact).toMatch(
      new RegExp(
        `^; it concerns the signed-off 2026-10 of group ${group} \\(signed off 2026-11-22\\); the marts, reports and BI files stay as built at 2026-11-22T1\\d:\\d\\d:\\d\\d\\.\\d{3}Z until a build succeeds`,
      ),
    );
  });

  test('reopened and closed again, then changed again: the second close is the reference and the build holds', async () => {
    setClock(clockFrom(new Date(at('15:00:00'))));
    await reopenMonth({ output: outputAt(out), month: OCTOBER, group, reason: 'late corrections' });
    const reopened = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
    expect(reopened.ok).toBe(true);
    setClock(clockFrom(new Date(at('15:30:00'))));
    await closeMonth({ output: outputAt(out), month: OCTOBER, group, by: 'A. Controller', force: true, rule: RULE });
    const [refund] = octoberCompleteOrders(sandbox, group, 1, 30);
    sandbox.world.orders.setStatus(refund, 'Refunded');
    await extractAndBuild(sandbox, out, at('16:00:00'));
    expect(await query(wh(), OFF(group))).toEqual([]);
    const rows = await query(
      wh(),
      `SELECT order_id, adjustment_kind AS kind FROM revenue_adjustments WHERE organisation_group_id = ${group}`,
    );
    expect(rows).toEqual([{ order_id: String(orderId(refund)), kind: 'status' }]);
  });
});
