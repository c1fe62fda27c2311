/**
 * A group's figures of a month, as data: what the revenue report shows for each group (computed in SQL by
 * src/report) and what a close freezes in the record (src/closes/frozen-figures.ts), which the build loads back
 * (close tables) and the report shows for a signed-off month. Amounts are exact decimal strings as DuckDB returns
 * them ("1234.50"); counts are integer strings.
 */

import type { ExtractState } from './month-state.js';

/**
 * The report's older two-word status: `closed` meant FINAL (past the lookback), never signed off. Kept because
 * close records hold it (`section.closure.status`); what people read is `state` (src/closes/month-state.ts).
 */
export type MonthStatus = 'closed' | 'provisional';

export interface GroupClosure {
  readonly groupId: number;
  /** closed ⇔ state final (see MonthStatus). */
  readonly status: MonthStatus;
  /** partial, provisional or final, by the one rule (src/closes/month-state.ts); signed off is the close record's. */
  readonly state: ExtractState;
  /** The state's watermark, when a readable state exists. */
  readonly watermark?: string;
  /** The first local day the extract ever read, when the state says. */
  readonly firstDay?: string;
  readonly lookbackDays?: number;
  /** The month is final once the watermark is later than this day (month end + lookback). */
  readonly closesAfter?: string;
  /** One sentence saying why, for the report. */
  readonly reason: string;
}

/** The mart's measures, in the order every format shows them. */
export const MEASURES = [
  'orders',
  'face_value',
  'order_total_paid',
  'order_credit',
  'order_saving',
  'group_revenue',
] as const;
export type Measure = (typeof MEASURES)[number];
export type Measures = Record<Measure, string>;

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
  /** The statuses of the revenue rule only (recognised revenue): this month, previous, change. */
  readonly recognised: Pick<CurrencySection, 'current' | 'previous' | 'change' | 'changePct'>;
  /** Every other status this month (not revenue under the rule), summed. */
  readonly other: Measures;
  /** Statuses this month that are neither in the rule nor known to the project: named, never counted. */
  readonly unknownStatuses: readonly string[];
  readonly topBrands: readonly BrandLine[];
  /** Every day of the month, zeros included. Empty when the currency has no orders this month. */
  readonly daily: readonly DayLine[];
}

/** Per closed month and currency: the adjustments booked in the report month (revenue_adjustments). */
export interface AdjustmentTotal {
  /** The closed month, "YYYY-MM". */
  readonly month: string;
  readonly currency: string;
  /** Changed order versions, each counted in its currency now (a removed order: its currency before). */
  readonly changes: string;
  /** Late orders (orders the close did not know, or listed again after a removal). */
  readonly orders: string;
  /** Orders the API no longer lists. */
  readonly removed: string;
  readonly group_revenue: string;
  /** Change of recognised revenue under the report's revenue rule. */
  readonly recognised_revenue: string;
}

export interface AdjustmentLine {
  readonly month: string;
  readonly orderId: string;
  readonly observedAt: string;
  readonly kind: string;
  readonly beforeStatus: string | null;
  readonly afterStatus: string;
  readonly currency: string;
  readonly beforeRevenue: string | null;
  readonly afterRevenue: string;
}

export interface Adjustments {
  readonly totals: readonly AdjustmentTotal[];
  /** The first ADJUSTMENT_LINES changes, by month, order and time; `more` says how many are not listed. */
  readonly lines: readonly AdjustmentLine[];
  readonly more: number;
}

/** The platform's own statistics against the lake's orders, per user (reconciliation_platform). */
export interface PlatformCheck {
  /** False when the warehouse has no statistics for the group and month. */
  readonly available: boolean;
  readonly matched: number;
  /** Per reason: rows (users, or the unattributed row) and their order difference. */
  readonly explained: readonly { readonly reason: string; readonly rows: number }[];
  readonly differs: number;
  /** The first PLATFORM_LINES differing users. */
  readonly differences: readonly {
    readonly userId: string;
    readonly platformOrders: string | null;
    readonly lakeOrders: string;
    readonly platformEgiftOrders: string | null;
    readonly lakeCompleteOrders: string;
    readonly faceValue: string;
    readonly cost: string;
    readonly savings: string;
    /**
     * Our orders of the user that month not Complete, by status ("1 Cancelled, 2 Refunded"; "" when none): the
     * statistics give no status, so only ours can be named. Absent in figures frozen before it was read.
     */
    readonly otherStatuses?: string;
  }[];
}

/** Credit users hold at the month end (credit_liability_monthly); credit units, no currency. */
export interface CreditLiability {
  readonly monthEnd: string;
  readonly users: string;
  readonly available: string;
  readonly granted: string;
  readonly spent: string;
  readonly expired: string;
  readonly oldestSnapshot: string;
  /**
   * Balances (users with credit available) resting on a read of a day before the month's last day; absent in
   * figures frozen before it was computed (issue 25).
   */
  readonly staleBalances?: string;
}

/** A change to a closed month's credit liability booked in the report month (credit_adjustments); credit units. */
export interface CreditAdjustment {
  /** The closed month, "YYYY-MM". */
  readonly month: string;
  readonly observedAt: string;
  readonly users: string;
  readonly available: string;
  readonly granted: string;
  readonly spent: string;
  readonly expired: string;
}

/** Who signed the month off for the group, from the close record in force. */
export interface Signoff {
  readonly by: string;
  readonly at: string;
  readonly seq: number;
  readonly hash: string;
  readonly note: string;
  readonly forced: boolean;
  /** A forced close: why (closes/frozen-figures.ts forcedBecause). */
  readonly forcedBecause?: string;
}

export interface GroupSection {
  readonly groupId: number;
  readonly name: string;
  readonly timezone: string | null;
  readonly closure: GroupClosure;
  readonly currencies: readonly CurrencySection[];
  /** Adjustments to closed months booked in this month (absent in a warehouse without the mart). */
  readonly adjustments?: Adjustments;
  /** Credit liability at the month end (absent without the mart or without credit extracted by then). */
  readonly credit?: CreditLiability;
  /** Changes to closed months' credit liability booked in this month (absent when none, or without the mart). */
  readonly creditAdjustments?: readonly CreditAdjustment[];
  /** The platform statistics check (absent in a warehouse without the mart). */
  readonly platform?: PlatformCheck;
  /** Present when the month is signed off: the section is then the one the close froze. */
  readonly signoff?: Signoff;
  /**
   * A provisional month the extract has covered only in part: its data runs to `through`, and the change compares
   * with the same days of the previous month (its first day to `previousThrough`). Absent: whole months.
   */
  readonly compared?: ComparedDays;
}

/** The days a partial month is compared on: the month's first to `through`, the previous month's first to `previousThrough`. */
export interface ComparedDays {
  readonly through: string;
  readonly previousThrough: string;
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
