/**
 * Instants that make day windows hard: a group's local midnights (regularly, and on DST-change days)
 * and the half hours either side of each DST change. Pure functions of the timezone and the range.
 */
import { TZDate } from '@date-fns/tz';
import { DAY_MS } from '../clock.js';

const offsetAt = (ms: number, tz: string) => new TZDate(ms, tz).getTimezoneOffset();

/** The instant of local midnight of the local calendar day containing `ms`, and of the next one. */
function localMidnight(ms: number, tz: string, plusDays = 0): number {
  const d = new TZDate(ms, tz);
  return new TZDate(d.getFullYear(), d.getMonth(), d.getDate() + plusDays, 0, 0, 0, tz).getTime();
}

/** Sorted special instants in [from, to). */
export function specialInstants(tz: string, from: number, to: number): number[] {
  const out: number[] = [];
  let midnight = localMidnight(from, tz);
  while (midnight < to) {
    const next = localMidnight(midnight + DAY_MS / 2, tz, 1);
    const dayNumber = Math.floor((midnight + 12 * 3_600_000) / DAY_MS);
    const dst = offsetAt(midnight, tz) !== offsetAt(next, tz);
    if (midnight >= from && (dst || dayNumber % 9 === 0)) out.push(midnight);
    if (dst) {
      let lo = midnight;
      let hi = next;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (offsetAt(mid, tz) === offsetAt(midnight, tz)) lo = mid;
        else hi = mid;
      }
      const change = Math.ceil(hi / 60_000) * 60_000;
      for (const t of [change - 1_800_000, change, change + 1_800_000]) if (t >= from && t < to) out.push(t);
    }
    midnight = next;
  }
  return out.sort((a, b) => a - b);
}
