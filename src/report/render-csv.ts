/**
 * The CSV for spreadsheets: one tidy table, one header row, plain numbers (no separators, no currency
 * symbols). Grain: one row per group, currency and order status for the report month; the month's
 * status (closed/provisional) leads every row, so it is the first thing a spreadsheet shows.
 * is_recognised_revenue says whether the row's status is revenue under PERKS_REVENUE_STATUSES: summing
 * the rows where it is true gives the report's recognised revenue.
 */
import { type RevenueReport } from './model.js';
import { MEASURES } from '../closes/index.js';

export const CSV_COLUMNS = [
  'month_status',
  'month',
  'organisation_group_id',
  'group_name',
  'order_currency',
  'order_status',
  ...MEASURES,
  'is_recognised_revenue',
] as const;

export function renderCsv(report: RevenueReport): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const g of report.groups) {
    for (const c of g.currencies) {
      for (const s of c.byStatus) {
        const text = [g.closure.status, report.month.ym, String(g.groupId), g.name, c.currency, s.status].map(
          textField,
        );
        lines.push(
          [...text, ...MEASURES.map((m) => s.values[m]), String(report.revenueRule.statuses.includes(s.status))].join(
            ',',
          ),
        );
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
  const out: { section: string; content: string }[] = [];
  // numbers stay plain (a negative amount is a number, not a formula); text is defused as in the main CSV
  const table = (section: string, header: string[], rows: string[][]) => {
    if (rows.length > 0)
      out.push({
        section,
        content: `${[header, ...rows].map((r) => r.map((v) => (/^-?\d+(\.\d+)?$/.test(v) ? v : textField(v))).join(',')).join('\r\n')}\r\n`,
      });
  };
  const ym = report.month.ym;
  table(
    'adjustments',
    [
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
    report.groups.flatMap((g) =>
      (g.adjustments?.totals ?? []).map((t) => [
        ym,
        String(g.groupId),
        g.name,
        t.month,
        t.currency,
        t.changes,
        t.orders,
        t.group_revenue,
        t.recognised_revenue,
        t.removed,
      ]),
    ),
  );
  const c = report.consolidated;
  if (c) {
    table(
      'consolidated',
      [
        'month',
        'reporting_currency',
        'organisation_group_id',
        'group_name',
        'recognised_revenue',
        'group_revenue',
        'not_converted',
      ],
      [
        ...c.groups.map((g) => [
          ym,
          c.currency,
          String(g.groupId),
          g.name,
          g.recognised,
          g.groupRevenue,
          g.missing.join(' '),
        ]),
        [ym, c.currency, '', 'Total', c.total.recognised, c.total.groupRevenue, c.missing.join(' ')],
      ],
    );
  }
  table(
    'credit',
    [
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
    report.groups
      .filter((g) => g.credit)
      .map((g) => {
        const k = g.credit!;
        return [
          k.monthEnd,
          String(g.groupId),
          g.name,
          k.users,
          k.available,
          k.granted,
          k.spent,
          k.expired,
          k.oldestSnapshot,
        ];
      }),
  );
  table(
    'credit_adjustments',
    [
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
    report.groups.flatMap((g) =>
      (g.creditAdjustments ?? []).map((a) => [
        ym,
        String(g.groupId),
        g.name,
        a.month,
        a.users,
        a.available,
        a.granted,
        a.spent,
        a.expired,
        a.observedAt,
      ]),
    ),
  );
  table(
    'platform',
    [
      'month',
      'organisation_group_id',
      'group_name',
      'result',
      'reason',
      'rows',
      'user_id',
      'platform_orders',
      'lake_orders',
      'platform_egift_orders',
      'lake_complete_orders',
      'face_value_difference',
      'cost_difference',
      'savings_difference',
    ],
    report.groups
      .filter((g) => g.platform?.available)
      .flatMap((g) => {
        const p = g.platform!;
        return [
          [ym, String(g.groupId), g.name, 'matched', '', String(p.matched), '', '', '', '', '', '', '', ''],
          ...p.explained.map((e) => [
            ym,
            String(g.groupId),
            g.name,
            'explained',
            e.reason,
            String(e.rows),
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
          ]),
          ...p.differences.map((d) => [
            ym,
            String(g.groupId),
            g.name,
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
          ]),
        ];
      }),
  );
  return out;
}
