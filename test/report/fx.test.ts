import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { writeRevenueReport } from '../../src/report/index.js';
import { InputError } from '../../src/shared/exit-codes.js';
import { buildFixture } from './fixture.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };

async function withRates(content: string | undefined, currency = 'EUR'): Promise<string> {
  const out = await buildFixture();
  if (content !== undefined) {
    await writeFile(join(out, 'rates.csv'), content);
    process.env.PERKS_FX_RATES = join(out, 'rates.csv');
  }
  process.env.PERKS_REPORTING_CURRENCY = currency;
  return out;
}

afterEach(() => {
  delete process.env.PERKS_FX_RATES;
  delete process.env.PERKS_REPORTING_CURRENCY;
});

describe('a reporting currency', () => {
  test('with rates for every currency: consolidated totals per group and in all, summed exactly', async () => {
    const out = await withRates('month,currency,rate\n2024-03,GBP,1.17\n2024-03,USD,0.92\n2024-02,GBP,1.16\n');
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      formats: ['md', 'html', 'csv'],
      revenueRule: RULE,
    });
    const [html, , md] = await Promise.all(r.files.map((f) => readFile(f, 'utf8')));
    // UK 94.95 × 1.17 = 111.0915; US 39.00 × 0.92 + 1.35 EUR = 37.23; all statuses 95.85 × 1.17, 41.70 × 0.92 + 1.35
    expect(md).toContain(
      'Consolidated in EUR: recognised revenue 148.32 EUR, group revenue of all statuses 151.86 EUR at GBP 1.17, USD 0.92',
    );
    expect(md).toContain('| Acme UK (11) | 111.09 EUR | 112.14 EUR | – |');
    expect(md).toContain('| Acme US (12) | 37.23 EUR | 39.71 EUR | – |');
    expect(md).toContain('| Total | 148.32 EUR | 151.86 EUR | – |');
    expect(html).toContain('id="consolidated"');
    const csv = await readFile(join(out, 'reports', 'sections', 'revenue-2024-03-consolidated.csv'), 'utf8');
    expect(csv).toBe(
      'month,reporting_currency,organisation_group_id,group_name,recognised_revenue,group_revenue,not_converted\r\n2024-03,EUR,11,Acme UK,111.09,112.14,\r\n2024-03,EUR,12,Acme US,37.23,39.71,\r\n2024-03,EUR,,Total,148.32,151.86,\r\n',
    );
  });

  test('a currency without a rate for the month is named and left out, never converted at 1', async () => {
    const out = await withRates('month,currency,rate\n2024-03,GBP,1.17\n2024-02,USD,0.92\n');
    const r = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      formats: ['md'],
      revenueRule: RULE,
    });
    const md = await readFile(r.files[0], 'utf8');
    expect(md).toContain('NOT INCLUDED: USD, which has no rate for 2024-03 in');
    expect(md).toContain('| Acme US (12) | 1.35 EUR | 1.35 EUR | USD |');
    expect(md).toContain('| Total | 112.44 EUR | 113.49 EUR | USD |');
  });

  test('without the file nothing changes', async () => {
    const out = await withRates(undefined);
    const plain = await readFile(
      (
        await writeRevenueReport({
          settings: configFrom(),
          output: outputAt(out),
          month: '2024-03',
          formats: ['md'],
          revenueRule: RULE,
        })
      ).files[0],
      'utf8',
    );
    expect(plain).not.toContain('Consolidated');
  });

  test.each([
    ['month,currency\n2024-03,GBP\n', /line 1: the header is "month,currency"/],
    ['month,currency,rate\n2024-3,GBP,1.17\n', /line 2: month "2024-3" is not YYYY-MM/],
    ['month,currency,rate\n2024-03,GBP,-1\n', /line 2: rate "-1" is not a positive decimal/],
    ['month,currency,rate\n2024-03,GBP,1.17\n2024-03,GBP,1.18\n', /line 3: a second rate for GBP in 2024-03/],
    ['month,currency,rate\n2024-03,GBP,1.17\n2024-03,US', /line 3: the file ends in the middle of a line/],
  ])('a malformed or partial rates file is one line, exit 2, and no report: %j', async (content, message) => {
    const out = await withRates(content);
    const err = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2024-03',
      revenueRule: RULE,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
    expect(await readdir(out)).not.toContain('reports');
  });

  test('rates without a reporting currency, or a missing file, are refused the same way', async () => {
    const out = await withRates('month,currency,rate\n', '');
    await expect(
      writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' }),
    ).rejects.toThrow(/^PERKS_REPORTING_CURRENCY="" is invalid: PERKS_FX_RATES needs the currency/);
    process.env.PERKS_REPORTING_CURRENCY = 'EUR';
    process.env.PERKS_FX_RATES = join(out, 'nope.csv');
    await expect(
      writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03' }),
    ).rejects.toThrow(/^PERKS_FX_RATES=.*nope\.csv cannot be read \(ENOENT\)/);
    expect(await readdir(out)).not.toContain('reports');
  });
});
