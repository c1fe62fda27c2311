import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import { loadReport, openWarehouse, parseMonth, type RevenueRule } from '../../src/report/index.js';
import { runPipeline } from '../../src/run/index.js';
import { clockFrom, setClock, type Clock } from '../../src/shared/clock.js';
import { ConfigError } from '../../src/shared/exit-codes.js';
import { buildSettingsOf, buildWarehouse } from '../../src/transform/index.js';
import { configFrom } from '../../src/config/index.js';
import { orgConfig } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

/**
 * One definition of revenue (issue 25): the finance report's headline and what a BI tool sums over the exported
 * revenue_monthly Parquet (`sum(group_revenue) where is_recognised`) agree to the cent, for every month, group and
 * currency of the demo's data; and a change of PERKS_REVENUE_STATUSES never moves a closed month's signed figures.
 */
const DAY = '2026-03-10';
const START = '2026-01-01';
const noon = (day: string) => new Date(`${day}T12:00:00Z`);

/** group|month|currency → amount, as exact decimal text with two places. */
type Cells = Map<string, string>;
const key = (group: number | string, month: string, currency: string) => `${group}|${month}|${currency}`;
const cents = (v: string | number | null | undefined) => (v === null || v === undefined ? '0.00' : String(v));

/** What a BI tool reads: the exported mart, `total` (an aggregate) per group, month and currency. */
async function biCells(out: string, total: string): Promise<Cells> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (
      await c.runAndReadAll(
        `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS m, coalesce(order_currency, '') AS c,
          (${total})::DECIMAL(38,2) AS v
        FROM read_parquet($f) GROUP BY ALL ORDER BY ALL`,
        { f: join(out, 'marts', 'revenue_monthly.parquet') },
      )
    ).getRowObjectsJson() as Record<string, string | number | null>[];
    return new Map(rows.map((r) => [key(String(r.g), String(r.m), String(r.c)), cents(r.v)]));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** The mart summed over its recognised rows (as now, or as closed). */
const biSums = (out: string, measure: 'group_revenue' | 'group_revenue_as_closed'): Promise<Cells> =>
  biCells(out, `coalesce(sum(${measure}) FILTER (WHERE is_recognised), 0)`);

/** The report's headline (recognised revenue, this month) for every group and month the BI cells name. */
async function headlines(out: string, cells: Cells, rule: RevenueRule): Promise<Cells> {
  const pairs = [...new Set([...cells.keys()].map((k) => k.split('|').slice(0, 2).join('|')))];
  const wh = await openWarehouse(out);
  const result: Cells = new Map();
  try {
    for (const pair of pairs) {
      const [group, month] = pair.split('|');
      const report = await loadReport(wh, outputAt(out), parseMonth(month), Number(group), rule);
      for (const c of report.groups[0].currencies)
        result.set(key(group, month, c.currency), c.recognised.current.group_revenue);
    }
  } finally {
    wh.close();
  }
  return result;
}

describe('the report and a BI sum over revenue_monthly agree on recognised revenue', () => {
  const sandbox = sandboxForFile({ seed: 25, today: DAY });
  let out: string;
  let before: Clock | undefined;

  beforeAll(async () => {
    out = tempOut('perks-recognised-');
    before = setClock(clockFrom(noon(DAY)));
    const summary = await runPipeline(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon(DAY),
    });
    expect(summary.steps.filter((s) => s.status !== 'success')).toEqual([]);
  }, 300_000);

  afterAll(() => {
    setClock(before);
  });

  test('for every month, group and currency of the demo, to the cent (PERKS_REVENUE_STATUSES=Complete)', async () => {
    const bi = await biSums(out, 'group_revenue');
    expect([...bi.keys()].map((k) => k.split('|')[1])).toEqual(
      expect.arrayContaining(['2026-01', '2026-02', '2026-03']),
    );
    expect(new Set([...bi.keys()].map((k) => k.split('|')[0])).size).toBeGreaterThan(1);
    // the rule matters in this data: the mart holds statuses that are not recognised
    const all = await biAll(out);
    expect(all.some(([k, v]) => v !== bi.get(k))).toBe(true);
    expect(await headlines(out, bi, { statuses: ['Complete'] })).toEqual(bi);
  }, 300_000);

  test('the provisional month is compared with the same days of the previous month, as a BI sum over the orders gives', async () => {
    // Extracted to 9 March (the run of 10 March): March 1–9 against February 1–9, recognised = Complete.
    const february = await biSums(out, 'group_revenue');
    const wh = await openWarehouse(out);
    try {
      const report = await loadReport(wh, outputAt(out), parseMonth('2026-03'), undefined, { statuses: ['Complete'] });
      expect(report.status).toBe('provisional');
      const compared: [string, string | undefined][] = [];
      for (const g of report.groups) {
        expect(g.compared, g.name).toEqual({ through: '2026-03-09', previousThrough: '2026-02-09' });
        const rows = await wh.all(
          `SELECT coalesce(order_currency, '') AS c, coalesce(sum(group_revenue) FILTER (WHERE order_status = 'Complete'), 0)::DECIMAL(38,2) AS v
            FROM stg_orders WHERE organisation_group_id = $g AND order_date BETWEEN DATE '2026-02-01' AND DATE '2026-02-09' GROUP BY 1`,
          { g: g.groupId },
        );
        const previous = new Map(rows.map((r) => [String(r.c), String(r.v)]));
        for (const c of g.currencies) {
          expect(c.recognised.previous.group_revenue, `${g.name} ${c.currency}`).toBe(
            previous.get(c.currency) ?? '0.00',
          );
          compared.push([c.recognised.previous.group_revenue, february.get(key(g.groupId, '2026-02', c.currency))]);
        }
      }
      // not the whole of February: less than it wherever February had revenue
      const wholeMonth = compared.filter(([, month]) => month !== undefined && month !== '0.00');
      expect(wholeMonth.length).toBeGreaterThan(0);
      for (const [days, month] of wholeMonth) expect(Number(days)).toBeLessThan(Number(month));
    } finally {
      wh.close();
    }
  }, 180_000);

  test("a change of the setting moves the open months and never a closed month's signed figures", async () => {
    const rule = { statuses: ['Complete'] };
    const signedBefore = await headlines(out, await biSums(out, 'group_revenue'), rule);
    const february = (cells: Cells) => new Map([...cells].filter(([k]) => k.split('|')[1] === '2026-02'));
    await closeMonth({ output: outputAt(out), month: '2026-02', by: 'A. Controller', rule });
    // Refunded becomes revenue: a drastic change, so that any month following it would show.
    const wider = { statuses: ['Complete', 'Refunded'] };
    const built = await buildWarehouse({ output: outputAt(out), asOf: DAY, revenueStatuses: wider.statuses });
    expect(built.steps.filter((s) => s.status === 'error')).toEqual([]);

    const asNow = await biSums(out, 'group_revenue');
    const asClosed = await biSums(out, 'group_revenue_as_closed');
    const now = await headlines(out, asNow, wider);
    // The closed month: its report is the signed figures, and so is the BI sum as closed over its recognised rows.
    expect(february(now)).toEqual(february(signedBefore));
    expect(february(asClosed)).toEqual(february(signedBefore));
    expect(february(asNow)).toEqual(february(signedBefore));
    // The open months follow the new rule, in the report and in the mart alike, and they moved.
    const open = (cells: Cells) => new Map([...cells].filter(([k]) => k.split('|')[1] !== '2026-02'));
    expect(open(now)).toEqual(open(asNow));
    expect(open(now)).not.toEqual(open(signedBefore));
  }, 300_000);
});

test('a blank PERKS_REVENUE_STATUSES stops the build before anything is built: one line, exit 2', async () => {
  process.env.PERKS_REVENUE_STATUSES = 'Complete,,';
  try {
    // the caller reads the settings (src/config) and passes them: the build is never started
    const build = async () =>
      buildWarehouse({
        output: outputAt(tempOut('perks-recognised-bad-')),
        asOf: DAY,
        ...buildSettingsOf(configFrom()),
      });
    const err = await build().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as Error).message).toBe(
      'PERKS_REVENUE_STATUSES="Complete,," is invalid: expected comma-separated order statuses, e.g. Complete or Complete,Pending',
    );
  } finally {
    delete process.env.PERKS_REVENUE_STATUSES;
  }
});

/** Every status summed, to show the rule leaves something out. */
const biAll = async (out: string): Promise<[string, string][]> => [...(await biCells(out, 'sum(group_revenue)'))];
