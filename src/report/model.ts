/**
 * The report as data: everything the three renderers show, computed in SQL. A group's figures (the sections) are
 * declared with the close record that freezes them (src/closes/figures.ts); renderers only format them.
 */
import type { GroupSection, Measure, Measures, MonthState, ReconciliationLine } from '../closes/index.js';
import type { ReportMonth } from './month.js';
import type { RevenueRule } from './revenue-rule.js';

/** How every format names the measures. */
export const MEASURE_LABELS: Record<Measure, string> = {
  orders: 'Orders',
  face_value: 'Face value',
  order_total_paid: 'Paid',
  order_credit: 'Credit',
  order_saving: 'Savings',
  group_revenue: 'Group revenue',
};

/** Totals consolidated into the reporting currency (PERKS_FX_RATES). */
export interface Consolidated {
  readonly currency: string;
  readonly file: string;
  /** Per group: recognised revenue and group revenue (all statuses) converted, and the currencies left out. */
  readonly groups: readonly {
    readonly groupId: number;
    readonly name: string;
    readonly recognised: string;
    readonly groupRevenue: string;
    /** False when none of the group's currencies had a rate: its amounts are then not known, not zero. */
    readonly converted: boolean;
    readonly missing: readonly string[];
  }[];
  readonly total: { readonly recognised: string; readonly groupRevenue: string };
  /** Currencies with orders this month but no rate for it: named, never converted at 1. */
  readonly missing: readonly string[];
  /** The rates used, "CUR rate". */
  readonly used: readonly string[];
}

/** Recognised revenue per month over the 12 months ending with the report's month, and the year to date. */
export interface Trend {
  /** "YYYY-MM", oldest first; the last is the report's month. */
  readonly months: readonly string[];
  /** The calendar year the year-to-date figures cover (January, or the data's first day, to the report's month). */
  readonly year: string;
  /** The first day the "All groups" year to date covers: 1 January, or the first day of data when later. */
  readonly ytdFrom: string;
  readonly lines: readonly TrendLine[];
}

export interface TrendLine {
  /** null: every group the totals count ("All groups"), per currency. */
  readonly groupId: number | null;
  readonly name: string;
  readonly currency: string;
  /** Recognised revenue per month of `Trend.months`, exact decimals; null before the group's data starts. */
  readonly months: readonly (string | null)[];
  /**
   * Each month's state (src/closes/month-state.ts; "All groups": statesOverGroups over the groups counted), null
   * where the month has no figure or no state is known: a partial month is marked in the trend.
   */
  readonly states: readonly (MonthState | null)[];
  readonly ytd: string;
  /** The first day its year to date covers: 1 January, or the day its data starts when later (a partial month). */
  readonly ytdFrom: string;
  /** The 12 months together. */
  readonly total: string;
}

/** Recognised revenue and the other statuses for one currency, summed over the groups the totals count. */
export interface CurrencyTotal {
  readonly currency: string;
  readonly orders: string;
  readonly recognised: string;
  readonly otherOrders: string;
  readonly other: string;
}

/** Test groups (stg_groups.is_sandbox): listed and flagged; counted in totals only when `included`. */
export interface TestGroups {
  readonly groups: readonly { readonly groupId: number; readonly name: string }[];
  readonly included: boolean;
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
  /** The month's state over its groups (src/closes/month-state.ts statesOverGroups): final is not signed off. */
  readonly status: MonthState;
  readonly groupFilter?: number;
  readonly generatedAt: string;
  /** The warehouse's path relative to the output directory (`warehouse.duckdb`), never absolute. */
  readonly warehouse: string;
  readonly groups: readonly GroupSection[];
  readonly reconciliation: Reconciliation;
  /** Present with PERKS_FX_RATES. */
  readonly consolidated?: Consolidated;
  /** The statuses counted as recognised revenue (PERKS_REVENUE_STATUSES). */
  readonly revenueRule: RevenueRule;
  readonly testGroups: TestGroups;
  /** Per group without a credit liability for the month: one sentence why, and what to do. */
  readonly creditGaps: readonly string[];
  /** The headline's totals per currency, over the groups counted (test groups left out unless included). */
  readonly totals: readonly CurrencyTotal[];
  readonly trend: Trend;
}

/** Whether a group counts in the report's totals. */
export function counted(report: Pick<RevenueReport, 'testGroups'>, groupId: number): boolean {
  return report.testGroups.included || !report.testGroups.groups.some((g) => g.groupId === groupId);
}

/** The current month's totals per group and currency (what `writeRevenueReport` returns). */
export interface TotalsLine extends Measures {
  readonly groupId: number;
  readonly currency: string;
}

export function totalsOf(report: RevenueReport): TotalsLine[] {
  return report.groups.flatMap((g) =>
    g.currencies.map((c) => ({ groupId: g.groupId, currency: c.currency, ...c.current })),
  );
}
