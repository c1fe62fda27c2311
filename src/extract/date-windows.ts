/**
 * Date windows. Convention: closed-open [start, end), in the group's own timezone, whole local days
 * (orders, interactions) or whole months (redemption stats). A window is sent to the API as wall-clock
 * times in the API's timezone (UTC unless configured); the API reads its `to` bound inclusively at
 * second precision (see docs/assumptions.md), so `to` is sent as end minus one second.
 */
import { TZDate } from '@date-fns/tz';
// the functions' own modules: the package's index loads all of date-fns (a few tenths of a second at every start)
import { addDays } from 'date-fns/addDays';
import { addMonths } from 'date-fns/addMonths';
import { format } from 'date-fns/format';

export interface Window {
  /** First local day (YYYY-MM-DD), inclusive. */
  startDay: string;
  /** Local day after the last (YYYY-MM-DD), exclusive. */
  endDay: string;
  /** UTC instants of the local bounds. */
  start: Date;
  end: Date;
}

/** The instant of local midnight starting `day` in `timezone`. */
export function localMidnight(day: string, timezone: string): Date {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(new TZDate(y, m - 1, d, 0, 0, 0, timezone).getTime());
}

/** The local calendar day (YYYY-MM-DD) of an instant in `timezone`. */
export function localDay(instant: Date, timezone: string): string {
  return format(new TZDate(instant.getTime(), timezone), 'yyyy-MM-dd');
}

export function shiftDay(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number);
  return format(addDays(new Date(Date.UTC(y, m - 1, d, 12)), days), 'yyyy-MM-dd');
}

export function monthStart(day: string): string {
  return `${day.slice(0, 7)}-01`;
}

export function shiftMonth(day: string, months: number): string {
  const [y, m] = day.split('-').map(Number);
  return format(addMonths(new Date(Date.UTC(y, m - 1, 1, 12)), months), 'yyyy-MM-dd');
}

export function window(startDay: string, endDay: string, timezone: string): Window {
  return { startDay, endDay, start: localMidnight(startDay, timezone), end: localMidnight(endDay, timezone) };
}

/** Whole local days from `from` (inclusive) to `to` (exclusive). */
export function dayWindows(from: string, to: string, timezone: string): Window[] {
  const out: Window[] = [];
  for (let day = from; day < to; day = shiftDay(day, 1)) out.push(window(day, shiftDay(day, 1), timezone));
  return out;
}

/** Whole months overlapping [from, to): each from its first day to the next month's first day. */
export function monthWindows(from: string, to: string, timezone: string): Window[] {
  const out: Window[] = [];
  // an empty range overlaps no month (a watermark past the run's upper bound plans from = to)
  if (from >= to) return out;
  for (let m = monthStart(from); m < to; m = shiftMonth(m, 1)) out.push(window(m, shiftMonth(m, 1), timezone));
  return out;
}

/** "YYYY-MM-DD HH:MM:SS" wall-clock time of an instant in the API's timezone. */
export function apiDateTime(instant: Date, apiTimezone: string): string {
  return format(new TZDate(instant.getTime(), apiTimezone), 'yyyy-MM-dd HH:mm:ss');
}

/** The bounds of a window as the orders filter expects them: from inclusive, to inclusive (end - 1 s). */
export function apiBounds(w: Window, apiTimezone: string): { from: string; to: string } {
  return { from: apiDateTime(w.start, apiTimezone), to: apiDateTime(new Date(w.end.getTime() - 1000), apiTimezone) };
}
