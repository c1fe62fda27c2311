import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadReport, openWarehouse, parseMonth, writeRevenueReport } from '../../src/report/index.js';
import type { RevenueReport } from '../../src/report/index.js';
import { runPipeline } from '../../src/run/index.js';
import { clockFrom, setClock, type Clock } from '../../src/shared/clock.js';
import { orgConfig } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

/**
 * The finance pack (issue 43, items 7–9) on one small sandbox output: test groups left out of the totals unless
 * asked, the 12-month trend and the year to date, a missing exchange rate, and the credit liability's sentence, each
 * held against plain SQL over the warehouse.
 */
const DAY = '2026-03-10';
const START = '2026-01-01';
const MONTH = '2026-02';
const RULE = { statuses: ['Complete'] };
const noon = (day: string) => new Date(`${day}T12:00:00Z`);

const sandbox = sandboxForFile({ today: DAY });
let out: string;
let before: Clock | undefined;

beforeAll(async () => {
  out = tempOut('perks-finance-pack-');
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

afterEach(() => {
  delete process.env.PERKS_FX_RATES;
  delete process.env.PERKS_REPORTING_CURRENCY;
});

async function sql(query: string, params: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const wh = await openWarehouse(out);
  try {
    return await wh.all(query, params);
  } finally {
    wh.close();
  }
}

async function report(month: string, includeTestGroups = false): Promise<RevenueReport> {
  const wh = await openWarehouse(out);
  try {
    return await loadReport(wh, outputAt(out), parseMonth(month), undefined, RULE, undefined, { includeTestGroups });
  } finally {
    wh.close();
  }
}

/** Recognised and other orders and revenue per currency for the month, over the groups `where` keeps. */
async function totalsBySql(where: string) {
  const rows = await sql(
    `SELECT coalesce(order_currency, '') AS currency,
      CAST(coalesce(sum(orders) FILTER (WHERE is_recognised AND month = $m), 0) AS BIGINT) AS orders,
      CAST(coalesce(sum(group_revenue) FILTER (WHERE is_recognised AND month = $m), 0) AS DECIMAL(38,2)) AS recognised,
      CAST(coalesce(sum(orders) FILTER (WHERE NOT is_recognised AND month = $m), 0) AS BIGINT) AS other_orders,
      CAST(coalesce(sum(group_revenue) FILTER (WHERE NOT is_recognised AND month = $m), 0) AS DECIMAL(38,2)) AS other
    FROM revenue_monthly JOIN stg_groups USING (organisation_group_id)
    WHERE month IN (CAST($m AS DATE), CAST($m AS DATE) - INTERVAL 1 MONTH) AND ${where}
    GROUP BY 1 ORDER BY 1`,
    { m: `${MONTH}-01` },
  );
  return rows.map((r) => ({
    currency: String(r.currency),
    orders: String(r.orders),
    recognised: String(r.recognised),
    otherOrders: String(r.other_orders),
    other: String(r.other),
  }));
}

describe('test groups', () => {
  test('are flagged and left out of the headline totals by default; --include-test-groups counts them', async () => {
    const tests = await sql(`SELECT organisation_group_id AS g, display_name AS n FROM stg_groups WHERE is_sandbox`);
    expect(tests.length).toBeGreaterThan(0);
    const left = await report(MONTH);
    expect(left.testGroups).toEqual({
      groups: tests.map((t) => ({ groupId: Number(t.g), name: String(t.n) })),
      included: false,
    });
    expect(left.totals).toEqual(await totalsBySql('NOT is_sandbox'));
    const counted = await report(MONTH, true);
    expect(counted.totals).toEqual(await totalsBySql('true'));
    expect(counted.totals).not.toEqual(left.totals);

    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: MONTH,
      formats: ['html', 'md'],
      revenueRule: RULE,
    });
    const [html, md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    const name = String(tests[0].n);
    expect(html).toContain(`${name} <span class="badge test" title="test group, not in the totals">test</span>`);
    const sentence = `Left out of the totals: ${name} (group ${String(tests[0].g)}), a test group (is_sandbox on the platform)`;
    expect(html).toContain(sentence);
    expect(md).toContain(sentence);
  }, 120_000);
});

describe('a reporting currency without a rate for one currency', () => {
  test('the group says "rate missing", never 0.00, and the total leaves it and the test groups out', async () => {
    // every currency of the month has a rate into GBP but AUD
    const currencies = (
      await sql(
        `SELECT DISTINCT order_currency AS c FROM revenue_monthly WHERE month = CAST($m AS DATE) AND order_currency NOT IN ('AUD', 'GBP')`,
        { m: `${MONTH}-01` },
      )
    ).map((r) => String(r.c));
    const rates = Object.fromEntries(currencies.map((c, i) => [c, `1.${i + 1}5`]));
    await writeFile(
      join(out, 'rates.csv'),
      `month,currency,rate\n${Object.entries(rates)
        .map(([c, v]) => `${MONTH},${c},${v}\n`)
        .join('')}`,
    );
    process.env.PERKS_FX_RATES = join(out, 'rates.csv');
    process.env.PERKS_REPORTING_CURRENCY = 'GBP';
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: MONTH,
      formats: ['html'],
      revenueRule: RULE,
    });
    const html = await readFile(r.files[0], 'utf8');
    const section = html.slice(html.indexOf('id="consolidated"'), html.indexOf('id="trend"'));
    const aud = await sql(`SELECT display_name AS n FROM stg_groups WHERE organisation_group_id IN
      (SELECT organisation_group_id FROM revenue_monthly GROUP BY 1 HAVING bool_and(order_currency = 'AUD'))`);
    expect(aud.length).toBeGreaterThan(0);
    const row = section.slice(
      section.indexOf(String(aud[0].n)),
      section.indexOf('</tr>', section.indexOf(String(aud[0].n))),
    );
    expect(row).toContain('rate missing');
    expect(row).not.toMatch(/0\.00 GBP/);
    const [expected] = await sql(
      `WITH rates AS (SELECT * FROM (VALUES ${Object.entries(rates)
        .map(([c, v]) => `('${c}', ${v}::DECIMAL(22,10))`)
        .concat(`('GBP', 1::DECIMAL(22,10))`)
        .join(', ')}) AS t(c, rate))
      SELECT CAST(round(sum(group_revenue * rate), 2) AS DECIMAL(38,2)) AS total
      FROM revenue_monthly JOIN stg_groups USING (organisation_group_id) JOIN rates ON rates.c = order_currency
      WHERE month = CAST($m AS DATE) AND is_recognised AND NOT is_sandbox`,
      { m: `${MONTH}-01` },
    );
    expect(section).toMatch(
      new RegExp(`Consolidated in GBP: recognised revenue ${groupDigits(String(expected.total))} GBP`),
    );
    expect(section).toContain('NOT INCLUDED: AUD');
  }, 120_000);
});

describe('the trend and the year to date', () => {
  test('per group and currency and for all groups the totals count, as plain SQL over revenue_monthly', async () => {
    const rep = await report(MONTH);
    expect(rep.trend.months).toEqual([
      '2025-03',
      '2025-04',
      '2025-05',
      '2025-06',
      '2025-07',
      '2025-08',
      '2025-09',
      '2025-10',
      '2025-11',
      '2025-12',
      '2026-01',
      '2026-02',
    ]);
    const rows = await sql(
      `SELECT CAST(organisation_group_id AS VARCHAR) AS g, strftime(month, '%Y-%m') AS m, coalesce(order_currency, '') AS c,
        CAST(sum(group_revenue) AS DECIMAL(38,2)) AS v
      FROM revenue_monthly WHERE is_recognised AND month BETWEEN DATE '2025-03-01' AND DATE '2026-02-01' GROUP BY ALL
      UNION ALL
      SELECT 'all', strftime(month, '%Y-%m'), coalesce(order_currency, ''), CAST(sum(group_revenue) AS DECIMAL(38,2))
      FROM revenue_monthly JOIN stg_groups USING (organisation_group_id)
      WHERE is_recognised AND NOT is_sandbox AND month BETWEEN DATE '2025-03-01' AND DATE '2026-02-01' GROUP BY ALL`,
    );
    const cell = new Map(rows.map((r) => [`${String(r.g)}|${String(r.c)}|${String(r.m)}`, String(r.v)]));
    const [ytdRows] = [
      await sql(
        `SELECT CAST(organisation_group_id AS VARCHAR) AS g, coalesce(order_currency, '') AS c, CAST(sum(group_revenue) AS DECIMAL(38,2)) AS v
        FROM revenue_monthly WHERE is_recognised AND month BETWEEN DATE '2026-01-01' AND DATE '2026-02-01' GROUP BY ALL
        UNION ALL
        SELECT 'all', coalesce(order_currency, ''), CAST(sum(group_revenue) AS DECIMAL(38,2))
        FROM revenue_monthly JOIN stg_groups USING (organisation_group_id)
        WHERE is_recognised AND NOT is_sandbox AND month BETWEEN DATE '2026-01-01' AND DATE '2026-02-01' GROUP BY ALL`,
      ),
    ];
    const ytd = new Map(ytdRows.map((r) => [`${String(r.g)}|${String(r.c)}`, String(r.v)]));
    expect(rep.trend.lines.length).toBeGreaterThan(4);
    expect(rep.trend.lines.filter((l) => l.groupId === null).length).toBeGreaterThan(0);
    // the month each line's data starts: before it a month has no figure (null), after it a month without revenue is 0.00
    const firsts = await sql(
      `SELECT CAST(organisation_group_id AS VARCHAR) AS g, strftime(min(month), '%Y-%m') AS m FROM revenue_monthly GROUP BY 1
      UNION ALL
      SELECT 'all', strftime(min(month), '%Y-%m') FROM revenue_monthly JOIN stg_groups USING (organisation_group_id) WHERE NOT is_sandbox`,
    );
    const start = new Map(firsts.map((r) => [String(r.g), String(r.m)]));
    expect(rep.trend.lines.some((l) => l.months[0] === null)).toBe(true);
    for (const line of rep.trend.lines) {
      const g = line.groupId === null ? 'all' : String(line.groupId);
      expect(line.months, `${g} ${line.currency}`).toEqual(
        rep.trend.months.map((m) => (m < start.get(g)! ? null : (cell.get(`${g}|${line.currency}|${m}`) ?? '0.00'))),
      );
      expect(line.ytd, `${g} ${line.currency} YTD`).toBe(ytd.get(`${g}|${line.currency}`) ?? '0.00');
    }
    // the CSV section carries the same figures, one tidy row per line and period
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: MONTH,
      formats: ['csv'],
      revenueRule: RULE,
    });
    const csv = await readFile(
      r.files.find((f) => f.endsWith('-trend.csv'))!,
      'utf8',
    );
    const ytdCsv = csv
      .split('\r\n')
      .filter((l) => l.includes(',year_to_date,'))
      .map((l) => l.split(','));
    expect(new Map(ytdCsv.map((f) => [`${f[3] || 'all'}|${f[5]}`, f[6]]))).toEqual(
      new Map(
        rep.trend.lines.map((l) => [
          `${l.groupId ?? 'all'}|${l.currency}`,
          ytd.get(`${l.groupId ?? 'all'}|${l.currency}`) ?? '0.00',
        ]),
      ),
    );
    // the data has revenue in both months of the year, so the year to date is more than the month
    expect(rep.trend.lines.some((l) => Number(l.ytd) > Number(l.months[11]))).toBe(true);
  }, 120_000);
});

describe('credit liability', () => {
  test('a month before the first credit read says why it has none and what to do; the month of the read shows it', async () => {
    const [first] = await sql(
      `SELECT strftime(min(oldest_snapshot_date), '%Y-%m-%d') AS d, strftime(min(month), '%Y-%m') AS m FROM credit_liability_monthly`,
    );
    expect(String(first.m)).toBe('2026-03');
    const february = await report(MONTH);
    expect(february.groups.every((g) => g.credit === undefined)).toBe(true);
    expect(february.creditGaps).toEqual([
      `Every group: no credit liability for February 2026, because credit balances are read per user as snapshots, the first read is of ${String(first.d)}, after the month's end, and a balance cannot be read back in time; every month from 2026-03 has its figure (keep the credit extract running over each month end, as \`perks run\` does, so that every later month has one).`,
    ]);
    const march = await report('2026-03');
    expect(march.creditGaps).toEqual([]);
    expect(march.groups.every((g) => g.credit !== undefined)).toBe(true);
  }, 120_000);
});

/** "1234.5" → "1,234.50", as the report writes amounts. */
function groupDigits(decimal: string): string {
  const [whole, fraction = ''] = decimal.split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction.padEnd(2, '0')}`;
}
