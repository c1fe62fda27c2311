/**
 * The CSV for spreadsheets: one tidy table, one header row, plain numbers (no separators, no currency
 * symbols). Grain: one row per group, currency and order status for the report month; the month's
 * state for the group (the marts' month_state: partial, provisional, final or signed_off) leads every row, so
 * it is the first thing a spreadsheet shows.
 * is_recognised_revenue says whether the row's status is revenue under PERKS_REVENUE_STATUSES; is_test_group
 * whether the group is a test group (stg_groups.is_sandbox), as every mart's is_test_group says: summing the rows
 * where is_recognised_revenue is true and is_test_group false gives the report's recognised revenue per currency
 * (all the rows where is_recognised_revenue is true when the report counts its test groups: --include-test-groups,
 * or a report of one group).
 */
import { type RevenueReport } from '../model.js';
import { MEASURES } from '../../closes/index.js';

export const CSV_COLUMNS = [
  'month_status',
  'month',
  'organisation_group_id',
  'group_name',
  'order_currency',
  'order_status',
  ...MEASURES,
  'is_recognised_revenue',
  // added after the others, so that readers by position keep theirs
  'is_test_group',
] as const;

export function renderCsv(report: RevenueReport): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const g of report.groups) {
    const isTest = report.testGroups.groups.some((t) => t.groupId === g.groupId);
    for (const c of g.currencies) {
      for (const s of c.byStatus) {
        const state = g.signoff !== undefined ? 'signed_off' : g.closure.state;
        const text = [state, report.month.ym, String(g.groupId), g.name, c.currency, s.status].map(textField);
        const flags = [report.revenueRule.statuses.includes(s.status), isTest].map(String);
        lines.push([...text, ...MEASURES.map((m) => s.values[m]), ...flags].join(','));
      }
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** RFC 4180 quoting; text that a spreadsheet would run as a formula is defused with a leading quote. */
function textField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/**
 * The report's other sections as tidy CSV files of their own (one table each, so the main CSV stays one
 * table): adjustments to closed months, consolidated totals, credit liability and its adjustments, platform statistics. Only
 * the sections the report has; written to <out>/reports/sections/.
 */
export function renderCsvSections(report: RevenueReport): { section: string; content: string }[] {
  return SECTIONS.flatMap(({ section, header, rows }) => {
    const body = rows(report);
    return body.length > 0 ? [{ section, content: sectionTable([header, ...body]) }] : [];
  });
}

type Row = readonly string[];

/** One section file: its name, its header, and its rows for a report (no rows: no file). */
interface Section {
  readonly section: string;
  readonly header: Row;
  readonly rows: (report: RevenueReport) => Row[];
}

/** Numbers stay plain (a negative amount is a number, not a formula); text is defused as in the main CSV. */
function sectionTable(rows: readonly Row[]): string {
  const field = (value: string) => (/^-?\d+(\.\d+)?$/.test(value) ? value : textField(value));
  return `${rows.map((r) => r.map(field).join(',')).join('\r\n')}\r\n`;
}

/** The two columns that name a group in every section. */
function groupColumns(g: { readonly groupId: number; readonly name: string }): Row {
  return [String(g.groupId), g.name];
}

const ADJUSTMENTS: Section = {
  section: 'adjustments',
  header: [
    'booked_month',
    'organisation_group_id',
    'group_name',
    'closed_month',
    'order_currency',
    'changes',
    'late_orders',
    'group_revenue_change',
    'recognised_revenue_change',
    // added after the others, so that readers by position keep theirs
    'removed_orders',
  ],
  rows: (report) =>
    report.groups.flatMap((g) =>
      (g.adjustments?.totals ?? []).map((t) => [
        report.month.ym,
        ...groupColumns(g),
        t.month,
        t.currency,
        t.changes,
        t.orders,
        t.group_revenue,
        t.recognised_revenue,
        t.removed,
      ]),
    ),
};

/** One row per group, then the total (group columns empty, named "Total"). */
const CONSOLIDATED: Section = {
  section: 'consolidated',
  header: [
    'month',
    'reporting_currency',
    'organisation_group_id',
    'group_name',
    'recognised_revenue',
    'group_revenue',
    'not_converted',
  ],
  rows: ({ consolidated: c, month }) => {
    if (!c) return [];
    const lead = [month.ym, c.currency];
    return [
      // A group none of whose currencies has a rate: empty amounts (not known), never 0.00.
      ...c.groups.map((g) => [
        ...lead,
        ...groupColumns(g),
        g.converted ? g.recognised : '',
        g.converted ? g.groupRevenue : '',
        g.missing.join(' '),
      ]),
      [...lead, '', 'Total', c.total.recognised, c.total.groupRevenue, c.missing.join(' ')],
    ];
  },
};

const CREDIT: Section = {
  section: 'credit',
  header: [
    'month_end',
    'organisation_group_id',
    'group_name',
    'users',
    'credit_available',
    'credit_granted',
    'credit_spent',
    'credit_expired',
    'oldest_snapshot_date',
  ],
  rows: (report) =>
    report.groups
      .filter((g) => g.credit)
      .map((g) => {
        const c = g.credit!;
        return [c.monthEnd, ...groupColumns(g), c.users, c.available, c.granted, c.spent, c.expired, c.oldestSnapshot];
      }),
};

const CREDIT_ADJUSTMENTS: Section = {
  section: 'credit_adjustments',
  header: [
    'booked_month',
    'organisation_group_id',
    'group_name',
    'closed_month',
    'users_change',
    'credit_available_change',
    'credit_granted_change',
    'credit_spent_change',
    'credit_expired_change',
    'observed_at',
  ],
  rows: (report) =>
    report.groups.flatMap((g) =>
      (g.creditAdjustments ?? []).map((a) => [
        report.month.ym,
        ...groupColumns(g),
        a.month,
        a.users,
        a.available,
        a.granted,
        a.spent,
        a.expired,
        a.observedAt,
      ]),
    ),
};

/** The columns of one differing user: empty on the matched and explained rows. */
const PLATFORM_USER_COLUMNS = [
  'user_id',
  'platform_orders',
  'lake_orders',
  'platform_egift_orders',
  'lake_complete_orders',
  'face_value_difference',
  'cost_difference',
  'savings_difference',
  // added after the others, so that readers by position keep theirs
  'lake_other_statuses',
];
const NO_USER = PLATFORM_USER_COLUMNS.map(() => '');

/** Per group with statistics: one "matched" row, one "explained" row per reason, one "differs" row per user listed. */
const PLATFORM: Section = {
  section: 'platform',
  header: ['month', 'organisation_group_id', 'group_name', 'result', 'reason', 'rows', ...PLATFORM_USER_COLUMNS],
  rows: (report) =>
    report.groups.flatMap((g) => {
      const p = g.platform;
      if (!p?.available) return [];
      const lead = [report.month.ym, ...groupColumns(g)];
      return [
        [...lead, 'matched', '', String(p.matched), ...NO_USER],
        ...p.explained.map((e) => [...lead, 'explained', e.reason, String(e.rows), ...NO_USER]),
        ...p.differences.map((d) => [
          ...lead,
          'differs',
          '',
          '1',
          d.userId,
          d.platformOrders ?? '',
          d.lakeOrders,
          d.platformEgiftOrders ?? '',
          d.lakeCompleteOrders,
          d.faceValue,
          d.cost,
          d.savings,
          d.otherStatuses ?? '',
        ]),
      ];
    }),
};

/**
 * Recognised revenue per month for the 12 months ending with the report's month, then the year to date, per group
 * and currency; "All groups" (no id) sums the groups the totals count. Test groups are marked. `month_state` is the
 * month's state (empty for the year to date, and before the data starts); `period_start` the first day the figure
 * covers: the month's first, or the data's first day in a partial month; for the year to date, 1 January or the
 * data's first day when later.
 */
const TREND: Section = {
  section: 'trend',
  header: [
    'report_month',
    'period_kind',
    'period',
    'organisation_group_id',
    'group_name',
    'order_currency',
    'recognised_revenue',
    'is_test_group',
    'month_state',
    'period_start',
  ],
  rows: (report) =>
    report.trend.lines.flatMap((l) => {
      const group = l.groupId === null ? ['', l.name] : groupColumns({ groupId: l.groupId, name: l.name });
      const test = String(report.testGroups.groups.some((t) => t.groupId === l.groupId));
      return [
        // a month before the data starts: no figure (empty), not zero
        ...report.trend.months.map((m, i) => [
          report.month.ym,
          'month',
          m,
          ...group,
          l.currency,
          l.months[i] ?? '',
          test,
          l.states[i] ?? '',
          l.months[i] === null ? '' : l.ytdFrom.slice(0, 7) === m ? l.ytdFrom : `${m}-01`,
        ]),
        [report.month.ym, 'year_to_date', report.trend.year, ...group, l.currency, l.ytd, test, '', l.ytdFrom],
      ];
    }),
};

/** In the order the files are listed. */
const SECTIONS: readonly Section[] = [ADJUSTMENTS, CONSOLIDATED, CREDIT, CREDIT_ADJUSTMENTS, PLATFORM, TREND];
