import { describe, expect, test } from 'vitest';
import { closureOf, lastFinalMonth, parseMonth, ReportInputError } from '../../src/report/index.js';
import { formatChange, formatMoney, formatPct, groupDigits } from '../../src/report/render/format.js';
import { comparedDays, dayLabel, dayRange, spanToMonth } from '../../src/report/month.js';
import { newOutDir, writeState } from './fixture.js';

describe('the report month', () => {
  test('a month knows its days, its end and the month before, across a leap February and a new year', () => {
    expect(parseMonth('2024-03')).toMatchObject({
      start: '2024-03-01',
      end: '2024-03-31',
      next: '2024-04-01',
      previous: '2024-02-01',
      days: 31,
      label: 'March 2024',
      previousLabel: 'February 2024',
    });
    expect(parseMonth('2024-02')).toMatchObject({ end: '2024-02-29', days: 29 });
    expect(parseMonth('2025-01')).toMatchObject({ previous: '2024-12-01', previousLabel: 'December 2024' });
  });

  test('a month covered in part is compared with the same days of the month before, at most all of it', () => {
    // the watermark is the first day not yet extracted: data to the day before
    expect(comparedDays(parseMonth('2026-12'), '2026-12-04')).toEqual({
      through: '2026-12-03',
      previousThrough: '2026-11-03',
    });
    expect(comparedDays(parseMonth('2024-03'), '2024-03-31')).toEqual({
      through: '2024-03-30',
      previousThrough: '2024-02-29',
    });
    expect(comparedDays(parseMonth('2025-03'), '2025-03-31')?.previousThrough).toBe('2025-02-28');
    expect(comparedDays(parseMonth('2027-01'), '2027-01-02')?.previousThrough).toBe('2026-12-01');
    // covered to its end, not begun, or coverage unknown: whole months
    expect(comparedDays(parseMonth('2026-12'), '2027-01-01')).toBeUndefined();
    expect(comparedDays(parseMonth('2026-12'), '2027-01-05')).toBeUndefined();
    expect(comparedDays(parseMonth('2026-12'), '2026-12-01')).toBeUndefined();
    expect(comparedDays(parseMonth('2026-12'), undefined)).toBeUndefined();
    expect(dayRange('2026-11-03')).toBe('1–3 November 2026');
    expect(dayRange('2026-12-01')).toBe('1 December 2026');
  });

  test.each(['2024-13', '2024-3', '24-03', 'March', '2024-03-01', ''])('--month %j is refused with one line', (bad) => {
    expect(() => parseMonth(bad)).toThrow(ReportInputError);
    expect(() => parseMonth(bad)).toThrow(/--month=.* is invalid: expected a month YYYY-MM/);
  });
});

describe('the year to date says its first day', () => {
  test('from 1 January it names the months; from a later day, that day (a one-day August is not "January to")', () => {
    const october = parseMonth('2026-10');
    expect(spanToMonth('2026-01-01', october)).toBe('January to October 2026');
    expect(spanToMonth('2026-08-31', october)).toBe('31 August to October 2026');
    expect(spanToMonth('2026-10-01', october)).toBe('October 2026');
    expect(spanToMonth('2026-10-15', october)).toBe('15–31 October 2026');
    expect(dayLabel('2026-08-31')).toBe('31 August 2026');
  });
});

describe('closed or provisional', () => {
  const march = parseMonth('2024-03');

  test('the month closes only once the watermark is past the month end plus the lookback', () => {
    const at = (watermark: string) => closureOf(march, 11, { watermark, lookbackDays: 7 }).status;
    expect(at('2024-04-07')).toBe('provisional'); // extracted to 2024-04-06: 31 March can still change
    expect(at('2024-04-08')).toBe('closed'); // extracted to 2024-04-07 = 31 March + 7 days
    // Without a lookback, the month closes as soon as its last day is extracted.
    expect(closureOf(march, 11, { watermark: '2024-04-01', lookbackDays: 0 }).status).toBe('closed');
    expect(closureOf(march, 11, { watermark: '2024-03-31', lookbackDays: 0 }).status).toBe('provisional');
  });

  test('a missing, unfinished, unreadable or partial extract state means provisional, with the reason', () => {
    expect(closureOf(march, 11, undefined)).toMatchObject({
      status: 'provisional',
      reason: 'no extract state for group 11 yet',
    });
    expect(closureOf(march, 11, { lookbackDays: 7 }).reason).toMatch(/has not finished yet/);
    expect(closureOf(march, 11, { error: 'not valid JSON' }).reason).toMatch(/unreadable: not valid JSON/);
    const partial = closureOf(march, 11, { watermark: '2024-06-01', firstDay: '2024-03-10', lookbackDays: 7 });
    expect(partial.status).toBe('provisional');
    expect(partial.reason).toMatch(/starts on 2024-03-10.*perks extract --start-date 2024-03-01/);
  });

  test('the last closed month is the latest month closed for every group', async () => {
    const out = newOutDir();
    await writeState(out, 11, { watermark: '2024-04-08', lookback_days: 7 });
    await writeState(out, 12, { watermark: '2024-05-20', lookback_days: 7 });
    expect(await lastFinalMonth(out, [11, 12])).toBe('2024-03');
    expect(await lastFinalMonth(out, [12])).toBe('2024-04');
    await writeState(out, 11, { watermark: '2024-04-07', lookback_days: 7 });
    expect(await lastFinalMonth(out, [11])).toBe('2024-02');
    expect(await lastFinalMonth(out, [11, 99])).toBeUndefined();
  });
});

describe('money and changes are formatted from the digits, not through floats', () => {
  test('thousands separators, two decimals and the currency code', () => {
    expect(formatMoney('1234567.5', 'GBP')).toBe('1,234,567.50 GBP');
    expect(formatMoney('-1250.00', 'USD')).toBe('-1,250.00 USD');
    expect(formatMoney('0.10', '')).toBe('0.10 (no currency)');
    // Beyond a double's precision: still exact.
    expect(groupDigits('12345678901234567.89')).toBe('12,345,678,901,234,567.89');
  });

  test('changes carry their sign, and a month with nothing before it is "new"', () => {
    expect(formatChange('group_revenue', '90.45', 'GBP')).toBe('+90.45 GBP');
    expect(formatChange('orders', '-3', 'GBP')).toBe('-3');
    expect(formatChange('group_revenue', '0.00', 'GBP')).toBe('0.00 GBP');
    expect(formatPct('1675.0', '95.85')).toBe('+1,675.0%');
    expect(formatPct('-12.5', '7.00')).toBe('-12.5%');
    expect(formatPct(null, '1.35')).toBe('new');
    expect(formatPct(null, '0.00')).toBe('–');
  });
});
