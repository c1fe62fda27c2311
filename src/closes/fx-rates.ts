/**
 * A reporting currency (issue 17): with PERKS_FX_RATES, a CSV `month,currency,rate` (the rate converts one
 * unit of `currency` into PERKS_REPORTING_CURRENCY for orders of that month), the report adds consolidated
 * totals. The reporting currency itself converts at 1; any other currency without a rate for the month is
 * named and left out of the total, never converted at 1. Without PERKS_FX_RATES nothing changes.
 */
import { readFileSync } from 'node:fs';
import { FxRatesError } from './errors.js';

export interface FxRates {
  readonly file: string;
  readonly reportingCurrency: string;
  /** "YYYY-MM|CUR" → rate as an exact decimal string. */
  readonly rates: ReadonlyMap<string, string>;
}

const CURRENCY = /^[A-Z]{3}$/;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const RATE = /^(?:0|[1-9]\d{0,11})(?:\.\d{1,10})?$/;

/**
 * Reads the rates the settings name (PERKS_FX_RATES, PERKS_REPORTING_CURRENCY, src/config); undefined without
 * a rates file. Every fault: one line, exit 2.
 */
export function fxRatesFrom(settings: { fxRates?: string; reportingCurrency?: string }): FxRates | undefined {
  const file = settings.fxRates;
  if (file === undefined || file === '') return undefined;
  const reportingCurrency = (settings.reportingCurrency ?? '').trim();
  if (!CURRENCY.test(reportingCurrency)) {
    throw new FxRatesError(
      `PERKS_REPORTING_CURRENCY=${JSON.stringify(settings.reportingCurrency ?? '')} is invalid: ` +
        `PERKS_FX_RATES needs the currency its rates convert into, a three-letter code such as EUR`,
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FxRatesError(
      `PERKS_FX_RATES=${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): give the path of a CSV with the columns month,currency,rate`,
    );
  }
  const bad = (n: number, why: string) =>
    new FxRatesError(
      `PERKS_FX_RATES=${file} line ${n}: ${why}; expected month,currency,rate (e.g. 2026-10,USD,0.9213), ` +
        `one rate per month and currency, into ${reportingCurrency}`,
    );
  return { file, reportingCurrency, rates: parseRates(text, bad) };
}

/** `month|currency` → rate, from the CSV's text; `bad(line, why)` is the error of a line that is wrong. */
function parseRates(text: string, bad: (n: number, why: string) => Error): Map<string, string> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  if (lines[0]?.trim().toLowerCase() !== 'month,currency,rate')
    throw bad(1, `the header is ${JSON.stringify(lines[0] ?? '')}`);
  if (!text.endsWith('\n') && lines.length > 1)
    throw bad(lines.length, 'the file ends in the middle of a line (cut short?)');
  const rates = new Map<string, string>();
  for (const [i, line] of lines.entries()) {
    if (i === 0) continue;
    const [month, currency, rate] = rateCells(line, (why) => bad(i + 1, why));
    const key = `${month}|${currency}`;
    if (rates.has(key)) throw bad(i + 1, `a second rate for ${currency} in ${month}`);
    rates.set(key, rate);
  }
  return rates;
}

/** A line's month, currency and rate, each checked. */
function rateCells(line: string, bad: (why: string) => Error): [string, string, string] {
  const cells = line.split(',').map((c) => c.trim());
  if (cells.length !== 3) throw bad(`${cells.length} fields`);
  const [month, currency, rate] = cells;
  if (!MONTH.test(month)) throw bad(`month ${JSON.stringify(month)} is not YYYY-MM`);
  if (!CURRENCY.test(currency)) throw bad(`currency ${JSON.stringify(currency)} is not a three-letter code`);
  if (!RATE.test(rate) || !/[1-9]/.test(rate)) throw bad(`rate ${JSON.stringify(rate)} is not a positive decimal`);
  return [month, currency, rate];
}

/** The rate of a currency for a month: "1" for the reporting currency itself, undefined when the file has none. */
export function rateOf(fx: FxRates, month: string, currency: string): string | undefined {
  if (currency === fx.reportingCurrency) return '1';
  return fx.rates.get(`${month}|${currency}`);
}
