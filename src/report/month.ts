/**
 * The report month as calendar dates. Orders carry their group-local day (order_date), so a month is a
 * plain range of local days: no timezone arithmetic is needed here, only calendar arithmetic in UTC.
 */
import type { ComparedDays } from '../closes/index.js';
import { ReportInputError } from './errors.js';

export interface ReportMonth {
  /** "2024-03" */
  readonly ym: string;
  /** First day, "2024-03-01". */
  readonly start: string;
  /** Last day, "2024-03-31". */
  readonly end: string;
  /** First day of the next month (exclusive end), "2024-04-01". */
  readonly next: string;
  /** First day of the previous month, "2024-02-01". */
  readonly previous: string;
  readonly days: number;
  /** "March 2024" */
  readonly label: string;
  /** "February 2024" */
  readonly previousLabel: string;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Parses --month; anything but a real YYYY-MM is a ReportInputError naming the value. */
export function parseMonth(text: string): ReportMonth {
  const m = MONTH.exec(String(text).trim());
  if (!m)
    throw new ReportInputError(`--month=${JSON.stringify(text)} is invalid: expected a month YYYY-MM, e.g. 2024-03`);
  return monthOf(Number(m[1]), Number(m[2]));
}

function monthOf(year: number, month: number): ReportMonth {
  const first = Date.UTC(year, month - 1, 1);
  const next = Date.UTC(year, month, 1);
  const previous = Date.UTC(year, month - 2, 1);
  return {
    ym: iso(first).slice(0, 7),
    start: iso(first),
    end: iso(next - DAY),
    next: iso(next),
    previous: iso(previous),
    days: Math.round((next - first) / DAY),
    label: `${NAMES[month - 1]} ${year}`,
    previousLabel: `${NAMES[new Date(previous).getUTCMonth()]} ${new Date(previous).getUTCFullYear()}`,
  };
}

/**
 * The span from `from` (YYYY-MM-DD) to the end of `month`, as people read it: "January to October 2026" from the
 * 1st of January, "31 August to October 2026" from a later day (the year to date of data that starts then).
 */
export function spanToMonth(from: string, month: ReportMonth): string {
  const fromMonth = NAMES[Number(from.slice(5, 7)) - 1];
  const day = Number(from.slice(8, 10));
  if (from.slice(0, 7) === month.ym)
    return day === 1 ? month.label : `${day}–${Number(month.end.slice(8))} ${month.label}`;
  return `${day === 1 ? fromMonth : `${day} ${fromMonth}`} to ${month.label}`;
}

/** "31 August 2026" for "2026-08-31". */
export const dayLabel = (day: string): string =>
  `${Number(day.slice(8, 10))} ${NAMES[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`;

/** The month that contains a day "YYYY-MM-DD". */
export function monthContaining(day: string): ReportMonth {
  return parseMonth(day.slice(0, 7));
}

const DAY = 86_400_000;

/**
 * Like with like for a month the extract has covered in part: it holds the days before the orders watermark
 * (the first local day not yet extracted), so the change compares its first day to the day before the watermark
 * with the same days of the previous month (to its last day when shorter: 30 March against 1–29 February).
 * Undefined when the whole month is covered, or none of it (then whole months are compared).
 */
export function comparedDays(month: ReportMonth, watermark: string | undefined): ComparedDays | undefined {
  if (watermark === undefined) return undefined;
  const through = addDays(watermark, -1);
  if (through < month.start || through >= month.end) return undefined;
  const previousDays = Math.round(
    (Date.parse(`${month.start}T00:00:00Z`) - Date.parse(`${month.previous}T00:00:00Z`)) / DAY,
  );
  const day = Math.min(Number(through.slice(8, 10)), previousDays);
  return { through, previousThrough: addDays(month.previous, day - 1) };
}

/** "1–3 December 2026" (or "1 December 2026"): the first day of a month to `through`. */
export function dayRange(through: string): string {
  const d = Number(through.slice(8, 10));
  const m = parseMonth(through.slice(0, 7));
  return `${d === 1 ? '1' : `1–${d}`} ${m.label}`;
}

/** Adds whole days to a calendar date "YYYY-MM-DD". */
export function addDays(day: string, n: number): string {
  return iso(Date.parse(`${day}T00:00:00Z`) + n * DAY);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
