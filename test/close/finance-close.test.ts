/**
 * The finance close, end to end: the sandbox over real HTTP, DuckDB on real files. October is extracted,
 * built and closed; the platform then refunds October orders, corrects one's money and shows a late one;
 * October is re-read and built again in November.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import { closeSummary, writeRevenueReport } from '../../src/report/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { extractAndBuild, octoberCompleteOrders, OCTOBER, TODAY } from './scenario.js';
import { configFrom } from '../../src/config/index.js';
import { unlabelled } from '../support/report-html.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };
const at = (time: string) => new Date(`${TODAY}T${time}Z`);

describe('a closed month never changes silently', () => {
  let sandbox: Sandbox;
  let out: string;
  let group: number;
  let refunded: number[];
  let late: number;
  let corrected: number;
  let before: Record<string, Record<'html' | 'csv' | 'md', string>>;
  let after: Record<string, Record<'html' | 'csv' | 'md', string>>;
  let frozen: Record<string, unknown>[];

  const reports = async (month: string) => {
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month,
      group,
      revenueRule: RULE,
    });
    const [html, csv, md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    return { html: unlabelled(html), csv, md };
  };
  const wh = () => join(out, 'warehouse.duckdb');

  beforeAll(async () => {
    sandbox = await testSandbox({ today: TODAY });
    out = tempOut('perks-close-');
    group = sandbox.world.groups[0].id;
    [late] = octoberCompleteOrders(sandbox, group, 1, 20);
    sandbox.world.orders.setHidden(late, true); // the platform does not show it yet
    await extractAndBuild(sandbox, out, `${TODAY}T12:00:00Z`);
    frozen = await query(
      wh(),
      `SELECT order_currency, order_status, orders, group_revenue FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' ORDER BY ALL`,
    );

    setClock(clockFrom(at('12:30:00')));
    await closeMonth({
      output: outputAt(out),
      month: OCTOBER,
      group,
      by: 'A. Controller',
      note: 'board pack',
      rule: RULE,
    });
    before = { [OCTOBER]: await reports(OCTOBER) };

    // Later, upstream: three refunds, a late order, a money correction.
    refunded = octoberCompleteOrders(sandbox, group, 3);
    for (const i of refunded) sandbox.world.orders.setStatus(i, 'Refunded');
    sandbox.world.orders.setHidden(late, false);
    [corrected] = octoberCompleteOrders(sandbox, group, 1, 10);
    sandbox.world.orders.revenue[corrected] += 100;
    await extractAndBuild(sandbox, out, `${TODAY}T13:00:00Z`);
    setClock(clockFrom(at('14:00:00')));
    after = { [OCTOBER]: await reports(OCTOBER), '2026-11': await reports('2026-11') };
  }, 180_000);

  afterAll(async () => {
    setClock(undefined);
    await sandbox?.close();
  });

  test("October's frozen figures are unchanged; revenue_monthly shows them beside the figures as now", async () => {
    const rows = await query(
      wh(),
      `SELECT order_currency, order_status, orders_as_closed AS orders, group_revenue_as_closed AS group_revenue, is_closed
      FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' AND orders_as_closed > 0 ORDER BY ALL`,
    );
    expect(rows).toEqual(frozen.map((f) => ({ ...f, is_closed: true })));
    const [now] = await query(
      wh(),
      `SELECT sum(orders) AS orders FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'`,
    );
    expect(Number(now.orders)).toBe(frozen.reduce((n, f) => n + Number(f.orders), 0) + 1); // the late order
  });

  test('revenue_adjustments holds exactly the changes, booked in November, with before and after', async () => {
    const rows = await query(
      wh(),
      `SELECT order_id, strftime(month, '%Y-%m') AS month, strftime(booked_month, '%Y-%m') AS booked, adjustment_kind AS kind, before_status, after_status,
        before_group_revenue, after_group_revenue, orders_change, group_revenue_change
      FROM revenue_adjustments WHERE organisation_group_id = ${group} ORDER BY order_id`,
    );
    const money = (minor: number) => (minor / 100).toFixed(2);
    const truth = (i: number) => sandbox.world.orders.get(i);
    const expected = [
      ...refunded.map((i) => ({
        order_id: String(truth(i).order_id),
        month: OCTOBER,
        booked: '2026-11',
        kind: 'status',
        before_status: 'Complete',
        after_status: 'Refunded',
        before_group_revenue: money(truth(i).group_revenue),
        after_group_revenue: money(truth(i).group_revenue),
        orders_change: 1 - 1,
        group_revenue_change: '0.00',
      })),
      {
        order_id: String(truth(late).order_id),
        month: OCTOBER,
        booked: '2026-11',
        kind: 'late order',
        before_status: null,
        after_status: 'Complete',
        before_group_revenue: null,
        after_group_revenue: money(truth(late).group_revenue),
        orders_change: 1,
        group_revenue_change: money(truth(late).group_revenue),
      },
      {
        order_id: String(truth(corrected).order_id),
        month: OCTOBER,
        booked: '2026-11',
        kind: 'money',
        before_status: 'Complete',
        after_status: 'Complete',
        before_group_revenue: money(truth(corrected).group_revenue - 100),
        after_group_revenue: money(truth(corrected).group_revenue),
        orders_change: 0,
        group_revenue_change: '1.00',
      },
    ].sort((a, b) => Number(a.order_id) - Number(b.order_id));
    expect(rows).toEqual(expected);
    // as closed + adjustments = as now, per status
    const [check] = await query(
      wh(),
      `WITH moves AS (
        SELECT after_status AS s, orders_change AS o, after_group_revenue AS r FROM revenue_adjustments WHERE organisation_group_id = ${group}
        UNION ALL SELECT before_status, CASE WHEN before_status IS NULL THEN 0 ELSE 0 END, -before_group_revenue FROM revenue_adjustments WHERE organisation_group_id = ${group} AND before_status IS NOT NULL
        UNION ALL SELECT after_status, 0, 0 FROM revenue_adjustments WHERE false),
      statusmoves AS (SELECT s, sum(r) AS r FROM moves GROUP BY s),
      m AS (SELECT order_status AS s, sum(group_revenue) AS now, sum(group_revenue_as_closed) AS closed FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01' GROUP BY 1)
      SELECT count(*) AS bad FROM m LEFT JOIN statusmoves USING (s) WHERE m.closed + coalesce(statusmoves.r, 0) <> m.now`,
    );
    expect(check.bad).toBe('0');
  });

  test("October's report generated again is the same, except its generated-at line, and says who closed it", () => {
    const [b, a] = [before[OCTOBER], after[OCTOBER]];
    expect(a.md).toBe(b.md);
    expect(a.csv).toBe(b.csv);
    const diff = a.html.split('\n').filter((line, i) => line !== b.html.split('\n')[i]);
    expect(diff).toHaveLength(1);
    expect(diff[0].trim()).toMatch(/^<p class="meta">Generated 2026-11-22T14:00:00Z from /);
    expect(a.md).toContain('**SIGNED OFF**: October 2026 is signed off for group');
    expect(a.md).toMatch(
      /\(signed off\): closed by A\. Controller at 2026-11-22T12:30:\d\d\.\d{3}Z \("board pack"\); close record 1, sha256 [0-9a-f]{64}\./,
    );
  });

  test("November's report lists the adjustments to October with totals per month and currency", async () => {
    const { md, html } = after['2026-11'];
    const store = sandbox.world.orders;
    // Per currency, from the platform's truth: changes, late orders, group revenue change, recognised revenue change.
    const changes = [
      ...refunded.map((i) => ({ i, late: 0, revenue: 0, recognised: -store.get(i).group_revenue })),
      { i: late, late: 1, revenue: store.get(late).group_revenue, recognised: store.get(late).group_revenue },
      { i: corrected, late: 0, revenue: 100, recognised: 100 },
    ];
    const currencies = [...new Set(changes.map((c) => store.currencyOf(c.i)))].sort();
    const fmt = (minor: number, cur: string) =>
      `${minor < 0 ? '-' : minor > 0 ? '+' : ''}${(Math.abs(minor) / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })} ${cur}`;
    expect(md).toContain('### Adjustments to closed months booked in November 2026');
    for (const cur of currencies) {
      const mine = changes.filter((c) => store.currencyOf(c.i) === cur);
      const sum = (k: 'late' | 'revenue' | 'recognised') => mine.reduce((n, c) => n + c[k], 0);
      expect(md).toContain(
        `| ${OCTOBER} | ${cur} | ${mine.length} | ${sum('late')} | 0 | ${fmt(sum('revenue'), cur)} | ${fmt(sum('recognised'), cur)} |`,
      );
    }
    expect(html).toContain('id="adjustments"');
    // the CSV carries the section too, as a tidy table of its own
    const csv = await readFile(join(out, 'reports', 'sections', `revenue-2026-11-g${group}-adjustments.csv`), 'utf8');
    expect(csv.split('\r\n')[0]).toBe(
      'booked_month,organisation_group_id,group_name,closed_month,order_currency,changes,late_orders,group_revenue_change,recognised_revenue_change,removed_orders',
    );
    for (const cur of currencies) {
      const mine = changes.filter((c) => store.currencyOf(c.i) === cur);
      const sum = (k: 'late' | 'revenue' | 'recognised') => (mine.reduce((n, c) => n + c[k], 0) / 100).toFixed(2);
      expect(csv).toContain(
        `,${OCTOBER},${cur},${mine.length},${mine.reduce((n, c) => n + c.late, 0)},${sum('revenue')},${sum('recognised')},0\r\n`,
      );
    }
    expect(html.match(/<tr><td>[^<]+<\/td><td>2026-10<\/td><th scope="row">\d+<\/th>/g)).toHaveLength(5);
  });

  test("perks run's summary line says each month's state in the marts' words, which are signed off and adjusted", async () => {
    const line = await closeSummary(outputAt(out), [group]);
    expect(line).toMatch(
      /^months: \d{4}-\d{2}(\.\.\d{4}-\d{2})? (partial|provisional|final|signed off)(, \d{4}-\d{2}(\.\.\d{4}-\d{2})? (partial|provisional|final|signed off))*; /,
    );
    expect(line).toMatch(new RegExp(`(: |, )${OCTOBER} signed off(, |; )`));
    expect(line).toMatch(
      new RegExp(`; signed off: group ${group} ${OCTOBER}; adjusted: group ${group} ${OCTOBER} \\(5 changes\\)$`),
    );
  });
});
