import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { beforeAll, describe, expect, test } from 'vitest';
import { ReportInputError, writeRevenueReport } from '../../src/report/index.js';
import { InputError } from '../../src/shared/exit-codes.js';
import { buildFixture, EXPECTED, writeState } from './fixture.js';
import { configFrom } from '../../src/config/index.js';
import { unlabelled } from '../support/report-html.js';
import { outputAt } from '../../src/output/index.js';

async function query(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJson();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

const MART_TOTALS = (warehouse: string) => `ATTACH '${warehouse}' AS w (READ_ONLY);
  SELECT organisation_group_id AS g, order_currency AS c, sum(orders) AS orders, sum(face_value) AS face_value, sum(order_total_paid) AS order_total_paid,
    sum(order_credit) AS order_credit, sum(order_saving) AS order_saving, sum(group_revenue) AS group_revenue
  FROM w.revenue_monthly WHERE month = DATE '2024-03-01' GROUP BY ALL ORDER BY ALL`;

describe('the revenue report of a small worked-out warehouse', () => {
  let out: string;
  let files: Record<'html' | 'csv' | 'md', string>;
  let result: Awaited<ReturnType<typeof writeRevenueReport>>;

  beforeAll(async () => {
    out = await buildFixture();
    result = await writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' });
    const [html, csv, md] = await Promise.all(result.files.map((f) => readFile(f, 'utf8')));
    files = { html: unlabelled(html), csv, md };
  });

  test('writes the three formats to <out>/reports/ with no temporary file left behind', async () => {
    expect(result.files).toEqual([
      ...['html', 'csv', 'md'].map((ext) => join(out, 'reports', `revenue-2024-03.${ext}`)),
      join(out, 'reports', 'sections', 'revenue-2024-03-trend.csv'),
    ]);
    expect((await readdir(join(out, 'reports'))).sort()).toEqual([
      'revenue-2024-03.csv',
      'revenue-2024-03.html',
      'revenue-2024-03.md',
      'sections',
    ]);
    expect(await readdir(join(out, 'reports', 'sections'))).toEqual(['revenue-2024-03-trend.csv']);
  });

  test('the totals equal the mart, and the hand-worked numbers, in the result and in all three formats', async () => {
    const mart = await query(out, MART_TOTALS(join(out, 'warehouse.duckdb')));
    expect(
      result.totals.map((t) => ({
        g: String(t.groupId),
        c: t.currency,
        orders: t.orders,
        face_value: t.face_value,
        order_total_paid: t.order_total_paid,
        order_credit: t.order_credit,
        order_saving: t.order_saving,
        group_revenue: t.group_revenue,
      })),
    ).toEqual(mart);
    expect(result.totals).toEqual([
      { groupId: 11, currency: 'GBP', ...EXPECTED.uk },
      { groupId: 12, currency: 'EUR', ...EXPECTED.eur },
      { groupId: 12, currency: 'USD', ...EXPECTED.usd },
    ]);

    // CSV: summed by DuckDB from the file itself, it gives the mart's totals back.
    const fromCsv = await query(
      out,
      `SELECT organisation_group_id::VARCHAR AS g, order_currency AS c, sum(orders::BIGINT) AS orders,
      ${['face_value', 'order_total_paid', 'order_credit', 'order_saving', 'group_revenue'].map((m) => `sum(${m}::DECIMAL(18,2)) AS ${m}`).join(', ')}
      FROM read_csv('${result.files[1]}', header = true, all_varchar = true) GROUP BY ALL ORDER BY ALL`,
    );
    expect(fromCsv).toEqual(mart);

    // HTML and Markdown show the same totals, formatted with separators and the currency code.
    const md = files.md.split('\n');
    expect(md).toContain(
      '| Acme UK (11) | GBP | 7 | 2,130.00 GBP | 1,917.00 GBP | 70.00 GBP | 213.00 GBP | 95.85 GBP | +90.45 GBP (+1,675.0%) |',
    );
    expect(md).toContain(
      '| Acme US (12) | USD | 3 | 1,260.00 USD | 1,184.00 USD | 0.00 USD | 76.00 USD | 41.70 USD | +37.20 USD (+826.7%) |',
    );
    expect(md).toContain(
      '| Acme US (12) | EUR | 1 | 30.00 EUR | 27.00 EUR | 0.00 EUR | 3.00 EUR | 1.35 EUR | +1.35 EUR (new) |',
    );
    const summary = files.html.slice(files.html.indexOf('id="summary"'), files.html.indexOf('id="group-11"'));
    for (const cell of [
      '2,130.00 GBP',
      '1,917.00 GBP',
      '70.00 GBP',
      '213.00 GBP',
      '95.85 GBP',
      '1,260.00 USD',
      '41.70 USD',
      '1.35 EUR',
    ]) {
      expect(summary).toContain(`<td class="num">${cell}</td>`);
    }
  });

  test('no machine path in what users share: the warehouse is named relative to the output directory', () => {
    expect(files.html).toContain('from warehouse.duckdb in the output directory.');
    for (const text of Object.values(files)) {
      expect(text).not.toContain(out);
      expect(text).not.toMatch(/(^|[\s(>"'])\/(tmp|home|root|work|Users|var)\//m);
    }
  });

  test('currencies are never added together: group 12 has a USD and a EUR line, and no line of both', () => {
    expect(files.csv).not.toMatch(/1291\.35|1,291\.35|43\.05/); // 1260+30 face, 41.70+1.35 revenue
    expect(files.html).not.toMatch(/1,291\.35|43\.05/);
  });

  test('the previous month and the change: absolute and in percent, "new" when the previous month had none', () => {
    const uk = files.html.slice(files.html.indexOf('id="group-11"'), files.html.indexOf('id="group-12"'));
    expect(uk).toMatch(
      /<th scope="row">Group revenue<\/th><td class="num">95\.85 GBP<\/td><td class="num">5\.40 GBP<\/td><td class="num up">\+90\.45 GBP<\/td><td class="num up">\+1,675\.0%<\/td>/,
    );
    expect(uk).toMatch(
      /<th scope="row">Orders<\/th><td class="num">7<\/td><td class="num">2<\/td><td class="num up">\+5<\/td><td class="num up">\+250\.0%<\/td>/,
    );
    const us = files.html.slice(files.html.indexOf('id="group-12"'));
    expect(us).toMatch(
      /<th scope="row">Group revenue<\/th><td class="num">1\.35 EUR<\/td><td class="num">0\.00 EUR<\/td><td class="num up">\+1\.35 EUR<\/td><td class="num up">new<\/td>/,
    );
    expect(us).toMatch(
      /<th scope="row">Credit<\/th><td class="num">0\.00 EUR<\/td><td class="num">0\.00 EUR<\/td><td class="num ">0\.00 EUR<\/td><td class="num ">–<\/td>/,
    );
  });

  test('by status, top five brands by group revenue, and one bar per day, from the latest extract of each order', () => {
    expect(files.csv.split('\r\n').slice(0, 3)).toEqual([
      'month_status,month,organisation_group_id,group_name,order_currency,order_status,orders,face_value,order_total_paid,order_credit,order_saving,group_revenue,is_recognised_revenue,is_test_group',
      'final,2024-03,11,Acme UK,GBP,Complete,6,2110.00,1899.00,70.00,211.00,94.95,true,false',
      'final,2024-03,11,Acme UK,GBP,Refunded,1,20.00,18.00,0.00,2.00,0.90,false,false',
    ]);
    const uk = files.html.slice(files.html.indexOf('id="group-11"'), files.html.indexOf('id="group-12"'));
    const brands = [
      ...uk
        .slice(uk.indexOf('Top brands by group revenue'))
        .matchAll(/<tr><th scope="row">([^<]+)<\/th><td class="num">\d+<\/td><td class="num">[^<]+ GBP<\/td>/g),
    ].map((m) => m[1]);
    expect(brands).toEqual(EXPECTED.ukTopBrands);
    expect(uk).toContain('data-day="2024-03-31" data-value="57.15"'); // 56.25 + 0.90 on the last day
    expect(uk.match(/<rect class="bar/g)).toHaveLength(31);
    // The stale first extract of order 2002 (25.00) is not counted: 30.00 is.
    expect(files.html).toContain('data-day="2024-03-10" data-value="32.70"');
  });

  test('says plainly at the top of every format that the month is provisional, and why', () => {
    expect(files.md.split('\n')[2]).toMatch(/^\*\*PROVISIONAL\*\*: March 2024 is not final yet for group 12\./);
    expect(files.md).toContain(
      'Acme US (provisional): group 12 is extracted to 2024-04-06; the month is final once the extract has passed 2024-04-07',
    );
    expect(files.csv.split('\r\n')[0].startsWith('month_status,')).toBe(true);
    expect(files.html.indexOf('class="status status-provisional"')).toBeLessThan(files.html.indexOf('id="summary"'));
    expect(files.md).toContain(
      "**Reconciliation**: Reconciled: the mart equals the lake's raw orders for March 2024 in every column (3 group/currency pairs).",
    );
  });
});

describe("recognised revenue: the statuses that are revenue are the organisation's rule", () => {
  test('the headline is recognised revenue (Complete by default), the other statuses apart, and the rule is said', async () => {
    const out = await buildFixture();
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      formats: ['html', 'md'],
      revenueRule: { statuses: ['Complete'] },
    });
    const [labelled, md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    const html = unlabelled(labelled);
    // UK: six Complete orders 94.95 GBP (February 5.40), the Refunded one (0.90) apart; US: Pending 2.70 USD apart.
    expect(md).toContain(
      'Recognised revenue counts orders whose status is Complete (PERKS_REVENUE_STATUSES); every other status is shown apart and never added to it.',
    );
    expect(md).toContain('| Acme UK (11) | GBP | 6 | 94.95 GBP | +89.55 GBP (+1,658.3%) | 1 | 0.90 GBP |');
    expect(md).toContain('| Acme US (12) | USD | 2 | 39.00 USD | +34.50 USD (+766.7%) | 1 | 2.70 USD |');
    const headline = html.slice(html.indexOf('id="recognised"'), html.indexOf('id="summary"'));
    expect(headline).toContain('<td class="num">94.95 GBP</td>');
    expect(headline).toContain('<td class="num">0.90 GBP</td>');
    expect(html.indexOf('id="recognised"')).toBeLessThan(html.indexOf('id="summary"'));
  });

  test('PERKS_REVENUE_STATUSES decides: Complete and Pending make US revenue 41.70', async () => {
    const out = await buildFixture({ revenueStatuses: ['Complete', 'Pending'] });
    process.env.PERKS_REVENUE_STATUSES = 'Complete, Pending';
    try {
      const r = await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2024-03',
        group: 12,
        formats: ['md'],
      });
      const md = await readFile(r.files[0], 'utf8');
      expect(md).toContain('status is Complete and Pending (PERKS_REVENUE_STATUSES)');
      expect(md).toContain('| Acme US (12) | USD | 3 | 41.70 USD | +37.20 USD (+826.7%) | 0 | 0.00 USD |');
    } finally {
      delete process.env.PERKS_REVENUE_STATUSES;
    }
  });

  test('a status the API starts sending is named in the report, never counted as revenue', async () => {
    const out = await buildFixture({
      tweak: `UPDATE revenue_monthly SET order_status = 'Disputed' WHERE organisation_group_id = 11 AND order_status = 'Refunded'`,
    });
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      group: 11,
      formats: ['md', 'csv'],
    });
    const md = await readFile(r.files[1], 'utf8');
    expect(md).toContain('Acme UK (11), GBP: unknown order status "Disputed" is not counted as recognised revenue');
    expect(md).toContain('| Acme UK (11) | GBP | 6 | 94.95 GBP |');
    expect(await readFile(r.files[0], 'utf8')).toContain(',Disputed,1,20.00,18.00,0.00,2.00,0.90,false');
  });

  test('a report under another rule than the warehouse was built with is refused, one line, exit 2', async () => {
    const out = await buildFixture({ revenueStatuses: ['Complete', 'Pending'] });
    const err = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      revenueRule: { statuses: ['Complete'] },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReportInputError);
    expect((err as ReportInputError).exitCode).toBe(2);
    expect((err as Error).message).toBe(
      'revenue_monthly was built under another PERKS_REVENUE_STATUSES than "Complete" (it counts "Pending" otherwise): rebuild with `perks build` under the same setting, or report under the build\'s',
    );
    expect(await readdir(out)).not.toContain('reports');
  });

  test('a blank PERKS_REVENUE_STATUSES is one line, exit 2', async () => {
    const out = await buildFixture();
    process.env.PERKS_REVENUE_STATUSES = 'Complete,,';
    try {
      // the caller reads the settings (src/config parses them) before the report: an input error, exit 2, like
      // the report's own
      const report = async () =>
        writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' });
      const err = await report().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).exitCode).toBe(2);
      expect((err as Error).message).toMatch(
        /^PERKS_REVENUE_STATUSES="Complete,," is invalid: expected comma-separated order statuses/,
      );
      expect(await readdir(out)).not.toContain('reports');
    } finally {
      delete process.env.PERKS_REVENUE_STATUSES;
    }
  });
});

describe('closed, provisional and reconciliation', () => {
  test('a provisional month covered in part is compared with the same days of the previous month, and says so', async () => {
    // Acme UK is extracted to 7 April (watermark 8 April): April 1–7 against March 1–7, not the whole of March.
    const out = await buildFixture();
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-04',
      group: 11,
      formats: ['md', 'html'],
    });
    expect(r.status).toBe('provisional');
    const [html, md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    // Recognised: 99.90 (order 1101) against 4.50 + 0.45 + 13.50 + 18.00 = 36.45 on March 1–7 (94.95 all month).
    expect(md).toContain('| Change vs 1–7 March 2024 |');
    expect(md).toContain('| Acme UK (11) | GBP | 1 | 99.90 GBP | +63.45 GBP (+174.1%) | 0 | 0.00 GBP |');
    expect(md).toContain(
      'The change compares 1–7 April 2024 with 1–7 March 2024 (the same days), not with the whole of March 2024.',
    );
    expect(md).toContain('| Revenue vs 1–7 March 2024 |');
    expect(html).toContain('<h3>GBP <span class="sub">1–7 April 2024 against 1–7 March 2024</span></h3>');
    expect(html).toContain('change against 1–7 March 2024');
    expect(html).not.toContain('Change vs March 2024');
  });

  test('one group whose extract is past the month end plus the lookback gets a closed report of its own', async () => {
    const out = await buildFixture();
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      group: 11,
      formats: ['md', 'csv'],
    });
    expect(r.status).toBe('final');
    expect(r.files).toEqual([
      join(out, 'reports', 'revenue-2024-03-g11.csv'),
      join(out, 'reports', 'revenue-2024-03-g11.md'),
      join(out, 'reports', 'sections', 'revenue-2024-03-g11-trend.csv'),
    ]);
    const md = await readFile(r.files[1], 'utf8');
    expect(md).toMatch(
      /^## Revenue report: March 2024 \(group 11\)\n\n\*\*FINAL\*\*: March 2024 is final for group 11\./,
    );
    expect(r.totals.map((t) => t.groupId)).toEqual([11]);
  });

  test('a missing extract state makes the month provisional', async () => {
    const out = await buildFixture();
    await rm(join(out, 'state'), { recursive: true });
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      group: 11,
      formats: ['md'],
    });
    expect(r.status).toBe('provisional');
    expect(await readFile(r.files[0], 'utf8')).toContain('no extract state for group 11 yet');
  });

  test('a mart that disagrees with the lake is reported with each difference', async () => {
    const out = await buildFixture({
      tweak: `UPDATE revenue_monthly SET group_revenue = group_revenue + 1 WHERE organisation_group_id = 12 AND order_currency = 'USD' AND order_status = 'Complete' AND month = DATE '2024-03-01'`,
    });
    const r = await writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' });
    expect(r.reconciled).toBe(false);
    const md = await readFile(r.files[2], 'utf8');
    expect(md).toContain(
      '**Reconciliation**: NOT RECONCILED: 1 difference between the mart and the lake: group 12 USD group revenue (mart 42.70, lake 41.70).',
    );
    const html = unlabelled(await readFile(r.files[0], 'utf8'));
    expect(html).toMatch(
      /<td>12<\/td><td>USD<\/td><th scope="row">Group revenue<\/th><td class="num">42\.70 USD<\/td><td class="num">41\.70 USD<\/td><td class="num down">1\.00 USD<\/td>/,
    );
  });

  test('without a lake the report still comes out, and says it could not reconcile', async () => {
    const out = await buildFixture();
    await rm(join(out, 'lake'), { recursive: true });
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      formats: ['md'],
    });
    expect(r.reconciled).toBe(false);
    expect(await readFile(r.files[0], 'utf8')).toMatch(
      /NOT RECONCILED: no raw orders in the lake at .*lake\/orders, so the mart cannot be reconciled/,
    );
  });

  test('the warehouse is opened read-only: it is byte for byte the same afterwards', async () => {
    const out = await buildFixture();
    const hash = async () =>
      createHash('sha256')
        .update(await readFile(join(out, 'warehouse.duckdb')))
        .digest('hex');
    const before = await hash();
    await writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' });
    expect(await hash()).toBe(before);
    expect((await readdir(out)).filter((f) => f.startsWith('warehouse'))).toEqual(['warehouse.duckdb']);
  });
});

describe('bad inputs get one clear line and exit code 2', () => {
  let out: string;
  beforeAll(async () => {
    out = await buildFixture();
  });

  test.each([
    [{ month: '2024-13' }, /^--month="2024-13" is invalid: expected a month YYYY-MM, e\.g\. 2024-03$/],
    [{ month: '2023-06' }, /^--month=2023-06 is not in the warehouse: it holds 2024-01 to 2024-04$/],
    [{ month: '2024-03', group: 99 }, /^--group=99 is not in the warehouse; its groups are 11, 12$/],
    [{ month: '2024-03', group: 0 }, /^--group=0 is invalid: expected an organisation_group_id/],
    [
      { month: '2024-03', formats: ['docx'] },
      /^--format=docx is invalid: expected html, csv, md, pdf, a comma-separated list of them, or all$/,
    ],
  ] as const)('%j', async (options, message) => {
    const err = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      ...(options as { month: string }),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReportInputError);
    expect((err as ReportInputError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });

  test('no warehouse at all', async () => {
    const err = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(join(out, 'nothing-here')),
      month: '2024-03',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReportInputError);
    expect((err as Error).message).toMatch(
      /^no warehouse at .*nothing-here\/warehouse\.duckdb: run `perks build` \(or `perks run`\) first$/,
    );
  });

  test('a month the extract reached but that has no orders is a real zero, not an error', async () => {
    await writeState(out, 11, { watermark: '2024-07-20', first_day: '2024-01-01', lookback_days: 7 });
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-06',
      group: 11,
      formats: ['md'],
    });
    expect(r.totals).toEqual([]);
    expect(r.status).toBe('final');
    expect(await readFile(r.files[0], 'utf8')).toContain('| Acme UK (11) | – | 0 | 0 | 0 | 0 | 0 | 0 | – |');
  });
});
