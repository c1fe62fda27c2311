/**
 * The report as data: everything the three renderers show, computed in SQL. Amounts are exact decimal
 * strings as DuckDB returns them ("1234.50"); counts are integer strings. Renderers only format them.
 */
import type { GroupClosure, MonthStatus } from './closure.js';
import type { ReportMonth } from './month.js';

/** The mart's measures, in the order every format shows them. */
export const MEASURES = ['orders', 'face_value', 'order_total_paid', 'order_credit', 'order_saving', 'group_revenue'] as const;
export type Measure = (typeof MEASURES)[number];
export type Measures = Record<Measure, string>;

export const MEASURE_LABELS: Record<Measure, string> = {
  orders: 'Orders',
  face_value: 'Face value',
  order_total_paid: 'Paid',
  order_credit: 'Credit',
  order_saving: 'Savings',
  group_revenue: 'Group revenue',
};

export interface StatusLine {
  /** order_status as the API sends it; "" when absent. */
  readonly status: string;
  readonly values: Measures;
}

export interface BrandLine {
  readonly brand: string;
  readonly orders: string;
  readonly group_revenue: string;
  /** Share of the currency's group revenue in percent, one decimal; null when that revenue is zero. */
  readonly share: string | null;
}

export interface DayLine {
  readonly day: string;
  readonly orders: string;
  readonly group_revenue: string;
}

/** One group's figures in one currency: currencies are never summed together. */
export interface CurrencySection {
  /** order_currency; "" when the orders carry none. */
  readonly currency: string;
  readonly current: Measures;
  readonly previous: Measures;
  /** current − previous, exact. */
  readonly change: Measures;
  /** Change in percent of previous, one decimal; null when previous is zero. */
  readonly changePct: Record<Measure, string | null>;
  readonly byStatus: readonly StatusLine[];
  readonly topBrands: readonly BrandLine[];
  /** Every day of the month, zeros included. Empty when the currency has no orders this month. */
  readonly daily: readonly DayLine[];
}

export interface GroupSection {
  readonly groupId: number;
  readonly name: string;
  readonly timezone: string | null;
  readonly closure: GroupClosure;
  readonly currencies: readonly CurrencySection[];
}

export interface ReconciliationLine {
  readonly groupId: number;
  readonly currency: string;
  readonly column: Measure;
  /** null when that side has no orders for the group and currency. */
  readonly mart: string | null;
  readonly lake: string | null;
  readonly difference: string;
}

export interface Reconciliation {
  /** False when there is no lake of orders to compare with; `note` says why. */
  readonly available: boolean;
  readonly note?: string;
  readonly lines: readonly ReconciliationLine[];
  /** The lines whose difference is not zero. */
  readonly differences: readonly ReconciliationLine[];
  readonly reconciled: boolean;
}

export interface RevenueReport {
  readonly month: ReportMonth;
  readonly status: MonthStatus;
  readonly groupFilter?: number;
  readonly generatedAt: string;
  /** The warehouse's path relative to the output directory (`warehouse.duckdb`), never absolute. */
  readonly warehouse: string;
  readonly groups: readonly GroupSection[];
  readonly reconciliation: Reconciliation;
}

/** The current month's totals per group and currency (what `writeRevenueReport` returns). */
export interface TotalsLine extends Measures {
  readonly groupId: number;
  readonly currency: string;
}

export function totalsOf(report: RevenueReport): TotalsLine[] {
  return report.groups.flatMap((g) => g.currencies.map((c) => ({ groupId: g.groupId, currency: c.currency, ...c.current })));
}
