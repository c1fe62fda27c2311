/**
 * The CSV for spreadsheets: one tidy table, one header row, plain numbers (no separators, no currency
 * symbols). Grain: one row per group, currency and order status for the report month; the month's
 * status (closed/provisional) leads every row, so it is the first thing a spreadsheet shows.
 * is_recognised_revenue says whether the row's status is revenue under PERKS_REVENUE_STATUSES: summing
 * the rows where it is true gives the report's recognised revenue.
 */
import { MEASURES, type RevenueReport } from './model.js';

export const CSV_COLUMNS = ['month_status', 'month', 'organisation_group_id', 'group_name', 'order_currency', 'order_status', ...MEASURES, 'is_recognised_revenue'] as const;

export function renderCsv(report: RevenueReport): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const g of report.groups) {
    for (const c of g.currencies) {
      for (const s of c.byStatus) {
        const text = [g.closure.status, report.month.ym, String(g.groupId), g.name, c.currency, s.status].map(textField);
        lines.push([...text, ...MEASURES.map((m) => s.values[m]), String(report.revenueRule.statuses.includes(s.status))].join(','));
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
