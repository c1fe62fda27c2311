/**
 * The rates a close used are frozen in its record (hashed with the rest): a closed month's consolidated
 * total does not move when the rates file is edited later, and the regenerated closed report uses them.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import { closesPath, fxRatesFrom, readCloses, type FrozenFigures } from '../../src/closes/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import { configFrom, loadConfig } from '../../src/config/index.js';
import { buildFixture } from '../report/fixture.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };

afterEach(() => {
  delete process.env.PERKS_FX_RATES;
  delete process.env.PERKS_REPORTING_CURRENCY;
});

describe('the rates of a close are frozen', () => {
  test("editing the rates file later changes the open groups' consolidated totals, never the closed one's; the closed report is the same with the file, edited, or without it", async () => {
    const out = await buildFixture();
    const rates = join(out, 'rates.csv');
    await writeFile(rates, 'month,currency,rate\n2024-03,GBP,1.17\n2024-03,USD,0.92\n');
    process.env.PERKS_FX_RATES = rates;
    process.env.PERKS_REPORTING_CURRENCY = 'EUR';

    const [record] = await closeMonth({
      output: outputAt(out),
      month: '2024-03',
      group: 11,
      by: 'A. Controller',
      rule: RULE,
      fx: fxRatesFrom(loadConfig(process.env)),
    });
    expect((record.figures as FrozenFigures).fx).toEqual({
      file: rates,
      reporting_currency: 'EUR',
      rates: { GBP: '1.17' },
    });
    const md = async (group?: number) =>
      readFile(
        (
          await writeRevenueReport({
            settings: configFrom(),
            output: outputAt(out),
            month: '2024-03',
            group,
            formats: ['md'],
            revenueRule: RULE,
          })
        ).files[0],
        'utf8',
      );
    const closed = await md(11);
    // UK: 94.95 GBP recognised × 1.17 (the fixture's figures, as in test/report/fx.test.ts)
    expect(closed).toContain('| Acme UK (11) | 111.09 EUR | 112.14 EUR | – |');

    // Later the rates file is edited: the open group converts at the new rate, the closed one at its frozen rate.
    await writeFile(rates, 'month,currency,rate\n2024-03,GBP,1.20\n2024-03,USD,0.95\n');
    const both = await md();
    expect(both).toContain('| Acme UK (11) | 111.09 EUR | 112.14 EUR | – |');
    // US: 39.00 USD × 0.95 + 1.35 EUR recognised; 41.70 USD × 0.95 + 1.35 EUR all statuses
    expect(both).toContain('| Acme US (12) | 38.40 EUR | 40.97 EUR | – |');
    expect(await md(11)).toBe(closed);

    // Another rates file (another name, another reporting currency): the closed report is still as signed.
    const other = join(out, 'rates-usd.csv');
    await writeFile(other, 'month,currency,rate\n2024-03,GBP,1.30\n2024-03,EUR,1.08\n');
    process.env.PERKS_FX_RATES = other;
    process.env.PERKS_REPORTING_CURRENCY = 'USD';
    expect(await md(11)).toBe(closed);

    // Without the file the closed report still shows its consolidated total, as signed.
    delete process.env.PERKS_FX_RATES;
    delete process.env.PERKS_REPORTING_CURRENCY;
    expect(await md(11)).toBe(closed);
    expect(await md()).not.toContain('Consolidated'); // an open group in the report: no rates, no consolidation

    // The rates are hashed with the rest: changing one in the record breaks the chain.
    const text = await readFile(closesPath(out), 'utf8');
    await writeFile(closesPath(out), text.replace('"GBP":"1.17"', '"GBP":"1.20"'));
    await expect(readCloses(outputAt(out))).rejects.toThrow(/line 1 has a hash that does not match its content/);
  });
});
