/**
 * The finance pack's figures across months: recognised revenue per month for the 12 months ending with the report's
 * month, and the calendar year to date, per group and currency and, across the groups the totals count, per
 * currency. Summed by DuckDB from revenue_monthly, the way a BI tool reads the mart: a signed-off month counts its
 * figures as closed, an open month as now; a month before the group's data starts has no figure (null), not zero
 * (docs/reference/report-and-close.md, "Trend and year to date"). Each figure carries its month's state, so a
 * partial month (the data starts after its first day) is marked, and the year to date starts on the day the data
 * does when that is after 1 January: a one-day August is not "January to October".
 */
import { statesOverGroups, type MonthState } from '../closes/index.js';
import type { Trend, TrendLine } from './model.js';
import type { ReportMonth } from './month.js';
import type { Warehouse } from './warehouse.js';

export interface TrendGroup {
  readonly groupId: number;
  readonly name: string;
  /** Counted in the "All groups" lines (a test group is not, unless asked). */
  readonly counted: boolean;
  /** The first day of its data (its orders extract's first_day); absent: its first month in the mart. */
  readonly firstDay?: string;
  /** Its months' states (src/closes/month-state.ts monthStatesOf: signed off first), by YYYY-MM. */
  readonly states?: ReadonlyMap<string, MonthState>;
}

/** "2026-10" → the 12 months "2025-11" … "2026-10". */
export function trendMonths(ym: string): string[] {
  const [y, m] = ym.split('-').map(Number);
  return Array.from({ length: 12 }, (_, i) => {
    const k = y * 12 + (m - 1) - 11 + i;
    return `${Math.floor(k / 12)}-${String((k % 12) + 1).padStart(2, '0')}`;
  });
}

export async function loadTrend(wh: Warehouse, month: ReportMonth, groups: readonly TrendGroup[]): Promise<Trend> {
  const months = trendMonths(month.ym);
  const year = month.ym.slice(0, 4);
  const cols = await wh.all(
    `SELECT column_name AS c FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'revenue_monthly'`,
  );
  const present = new Set(cols.map((r) => String(r.c)));
  // A signed-off month's recognised revenue is its figure as closed (a warehouse without the columns has none).
  const value =
    present.has('is_closed') && present.has('group_revenue_as_closed')
      ? 'CASE WHEN is_closed THEN coalesce(group_revenue_as_closed, 0) ELSE group_revenue END'
      : 'group_revenue';
  const rows = await wh.all(
    `WITH chosen AS (SELECT unnest(from_json($groups, '["json"]')) AS j),
    groups AS (SELECT CAST(j->>'g' AS BIGINT) AS g, CAST(j->>'c' AS BOOLEAN) AS counted FROM chosen),
    cells AS (
      SELECT r.organisation_group_id AS g, groups.counted, strftime(r.month, '%Y-%m') AS m,
        coalesce(r.order_currency, '') AS currency, ${value} AS v
      FROM revenue_monthly r JOIN groups ON groups.g = r.organisation_group_id
      WHERE r.is_recognised AND r.month BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
    )
    SELECT g, currency, m, CAST(sum(v) AS DECIMAL(38,2)) AS v FROM cells GROUP BY ALL
    UNION ALL
    SELECT NULL, currency, m, CAST(sum(v) AS DECIMAL(38,2)) FROM cells WHERE counted GROUP BY ALL
    UNION ALL
    SELECT g, currency, 'ytd', CAST(sum(v) AS DECIMAL(38,2)) FROM cells WHERE m >= $jan GROUP BY ALL
    UNION ALL
    SELECT NULL, currency, 'ytd', CAST(sum(v) AS DECIMAL(38,2)) FROM cells WHERE counted AND m >= $jan GROUP BY ALL
    UNION ALL
    SELECT g, currency, '12', CAST(sum(v) AS DECIMAL(38,2)) FROM cells GROUP BY ALL
    UNION ALL
    SELECT NULL, currency, '12', CAST(sum(v) AS DECIMAL(38,2)) FROM cells WHERE counted GROUP BY ALL`,
    {
      groups: JSON.stringify(groups.map((g) => ({ g: g.groupId, c: g.counted }))),
      first: `${months[0]}-01`,
      last: month.start,
      jan: `${year}-01`,
    },
  );
  // The month each group's data starts (its first month in the mart): the months before it have no data, not zero.
  const firsts = await wh.all(
    `SELECT organisation_group_id AS g, strftime(min(month), '%Y-%m') AS first FROM revenue_monthly GROUP BY 1`,
  );
  const first = new Map(firsts.map((r) => [Number(r.g), String(r.first)]));
  const all = groups.filter((g) => g.counted && first.has(g.groupId)).map((g) => first.get(g.groupId)!);
  const starts = (g: number | null) => (g === null ? all.sort()[0] : first.get(g));
  // The year to date's first day: 1 January, or the day the group's data starts when later.
  const jan1 = `${year}-01-01`;
  const ytdFrom = (g: TrendGroup) => {
    const day = g.firstDay ?? (first.has(g.groupId) ? `${first.get(g.groupId)}-01` : jan1);
    return day > jan1 ? day : jan1;
  };
  const counted = groups.filter((g) => g.counted && first.has(g.groupId));
  const span: LineSpan = {
    ytdFrom: (g) => {
      if (g !== null) return ytdFrom(groups.find((x) => x.groupId === g)!);
      return counted.map(ytdFrom).sort()[0] ?? jan1;
    },
    state: (g, m) => {
      if (g !== null) return groups.find((x) => x.groupId === g)?.states?.get(m) ?? null;
      const states = counted.flatMap((x) => (m >= first.get(x.groupId)! && x.states?.get(m) ? [x.states.get(m)!] : []));
      return states.length > 0 ? statesOverGroups(states) : null;
    },
  };
  return { months, year, ytdFrom: span.ytdFrom(null), lines: trendLines(rows, months, groups, starts, span) };
}

/** A line's month states and the first day of its year to date (null: "All groups"). */
interface LineSpan {
  ytdFrom(groupId: number | null): string;
  state(groupId: number | null, month: string): MonthState | null;
}

/** One line per group and currency (in the groups' order, currencies sorted), then one per currency for all groups. */
function trendLines(
  rows: readonly Record<string, unknown>[],
  months: readonly string[],
  groups: readonly TrendGroup[],
  starts: (groupId: number | null) => string | undefined,
  span: LineSpan,
): TrendLine[] {
  const cell = new Map(rows.map((r) => [`${String(r.g)}|${String(r.currency)}|${String(r.m)}`, String(r.v)]));
  const line = (g: number | null, name: string, currency: string): TrendLine => {
    const values = months.map((m) => {
      const start = starts(g);
      return start === undefined || m < start ? null : (cell.get(`${String(g)}|${currency}|${m}`) ?? '0.00');
    });
    return {
      groupId: g,
      name,
      currency,
      months: values,
      states: months.map((m, i) => (values[i] === null ? null : span.state(g, m))),
      ytd: cell.get(`${String(g)}|${currency}|ytd`) ?? '0.00',
      ytdFrom: span.ytdFrom(g),
      total: cell.get(`${String(g)}|${currency}|12`) ?? '0.00',
    };
  };
  const currenciesOf = (g: number | null) =>
    [...new Set(rows.filter((r) => (r.g === null ? null : Number(r.g)) === g).map((r) => String(r.currency)))].sort();
  return [
    ...groups.flatMap((g) => currenciesOf(g.groupId).map((c) => line(g.groupId, g.name, c))),
    ...currenciesOf(null).map((c) => line(null, 'All groups', c)),
  ];
}
