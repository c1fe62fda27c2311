/**
 * The report's SQL. Every sum, difference and percentage is computed by DuckDB on DECIMAL columns, so
 * totals are exact; TypeScript only arranges the rows. Column names come from the fixed MEASURES list;
 * values are always $parameters.
 */
import {
  MEASURES,
  type Adjustments,
  type CreditAdjustment,
  type CreditLiability,
  type PlatformCheck,
  type BrandLine,
  type DayLine,
  type Measures,
  type StatusLine,
} from '../closes/index.js';
import type { ReportMonth } from './month.js';
import type { Row, Warehouse } from './warehouse.js';

export interface GroupInfo {
  readonly groupId: number;
  readonly name: string;
  readonly timezone: string | null;
  /** A test group (stg_groups.is_sandbox): flagged, and left out of the totals unless asked. */
  readonly isTest: boolean;
}

/** Groups known to the warehouse: stg_groups when built, plus any group that has revenue. */
export async function listGroups(wh: Warehouse): Promise<GroupInfo[]> {
  let named = `SELECT NULL::BIGINT AS id, NULL::VARCHAR AS name, NULL::VARCHAR AS timezone, false AS is_test WHERE false`;
  if (wh.tables.has('stg_groups')) {
    // The display name when the group has one, else its name (whichever of these columns the model has).
    const columns = await wh.all(
      `SELECT column_name AS c FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'stg_groups'`,
    );
    const present = new Set(columns.map((r) => String(r.c)));
    const names = ['display_name', 'group_name', 'name'].filter((c) => present.has(c));
    const name = names.length === 0 ? 'NULL' : `coalesce(${names.map((c) => `nullif(trim(${c}), '')`).join(', ')})`;
    const timezone = present.has('timezone') ? 'timezone' : 'NULL';
    const isTest = present.has('is_sandbox') ? 'coalesce(is_sandbox, false)' : 'false';
    named = `SELECT CAST(organisation_group_id AS BIGINT) AS id, ${name} AS name, ${timezone} AS timezone, ${isTest} AS is_test FROM stg_groups`;
  }
  const rows = await wh.all(`
    WITH named AS (${named}),
    revenue AS (SELECT DISTINCT CAST(organisation_group_id AS BIGINT) AS id FROM revenue_monthly)
    SELECT coalesce(n.id, r.id) AS id, any_value(n.name) AS name, any_value(n.timezone) AS timezone,
      coalesce(bool_or(n.is_test), false) AS is_test
    FROM named n FULL OUTER JOIN revenue r ON r.id = n.id
    GROUP BY 1 ORDER BY 1`);
  return rows.map((r) => ({
    groupId: Number(r.id),
    name: r.name === null ? `Group ${r.id}` : String(r.name),
    timezone: r.timezone === null ? null : String(r.timezone),
    isTest: r.is_test === true,
  }));
}

/** First and last month ("YYYY-MM") the mart holds for one group; undefined when it holds none. */
export async function monthsHeld(wh: Warehouse, groupId: number): Promise<{ first: string; last: string } | undefined> {
  const [row] = await wh.all(
    `SELECT strftime(min(month), '%Y-%m') AS first, strftime(max(month), '%Y-%m') AS last FROM revenue_monthly WHERE organisation_group_id = $group`,
    { group: groupId },
  );
  return row?.first ? { first: String(row.first), last: String(row.last) } : undefined;
}

const sums = (prefix = '') => MEASURES.map((m) => `coalesce(sum(${prefix}${m}), 0) AS ${m}`).join(',\n      ');
const pick = (row: Row, suffix = ''): Measures =>
  Object.fromEntries(MEASURES.map((m) => [m, String(row[m + suffix])])) as Measures;

export interface CurrencyTotals {
  readonly currency: string;
  readonly current: Measures;
  readonly previous: Measures;
  readonly change: Measures;
  readonly changePct: Record<(typeof MEASURES)[number], string | null>;
}

/**
 * Per currency: this month, the previous month, the change and the change in percent; only the recognised rows
 * (the mart's is_recognised, the one definition of revenue) or only the others when `recognised` is given.
 * With `previousThrough` (a month covered in part) the previous side is the previous month's first day to that
 * day, from the staged orders, each order recognised or not as the mart flags its cell (group, month, currency,
 * status).
 */
export async function currencyTotals(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
  recognised?: boolean,
  previousThrough?: string,
): Promise<CurrencyTotals[]> {
  const side = (when: string) =>
    MEASURES.map(
      (m) => `coalesce(sum(${m}) FILTER (WHERE month = ${when}::DATE), 0) AS ${m}${when === '$cur' ? '' : '_prev'}`,
    ).join(',\n      ');
  const change = MEASURES.map(
    (m) => `${m} - ${m}_prev AS ${m}_change,
      CASE WHEN ${m}_prev = 0 THEN NULL ELSE CAST(round((${m} - ${m}_prev) * 100 / ${m}_prev, 1) AS DECIMAL(18,1)) END AS ${m}_pct`,
  ).join(',\n      ');
  const flag = (alias: string) =>
    recognised === undefined ? '' : ` AND ${recognised ? '' : 'NOT '}${alias}is_recognised`;
  const months = previousThrough === undefined ? '($cur::DATE, $prev::DATE)' : '($cur::DATE)';
  const sameDays =
    previousThrough === undefined
      ? ''
      : `
      UNION ALL
      SELECT coalesce(o.order_currency, '') AS currency, $prev::DATE AS month, 1 AS orders,
        ${MEASURES.filter((m) => m !== 'orders')
          .map((m) => `o.${m}`)
          .join(', ')}
      FROM stg_orders o JOIN revenue_monthly r
        ON r.organisation_group_id = o.organisation_group_id AND r.month = $prev::DATE
        AND r.order_currency IS NOT DISTINCT FROM o.order_currency AND r.order_status IS NOT DISTINCT FROM o.order_status
      WHERE o.organisation_group_id = $group AND o.order_date >= $prev::DATE AND o.order_date <= $prevThrough::DATE${flag('r.')}`;
  const rows = await wh.all(
    `WITH base AS (
      SELECT coalesce(order_currency, '') AS currency, month, ${MEASURES.join(', ')}
      FROM revenue_monthly
      WHERE organisation_group_id = $group AND month IN ${months}${flag('')}${sameDays}
    ),
    sides AS (SELECT currency, ${side('$cur')}, ${side('$prev')} FROM base GROUP BY currency)
    SELECT *, ${change} FROM sides ORDER BY currency`,
    {
      group: groupId,
      cur: month.start,
      prev: month.previous,
      ...(previousThrough === undefined ? {} : { prevThrough: previousThrough }),
    },
  );
  return rows.map((r) => ({
    currency: String(r.currency),
    current: pick(r),
    previous: pick(r, '_prev'),
    change: pick(r, '_change'),
    changePct: Object.fromEntries(
      MEASURES.map((m) => [m, r[`${m}_pct`] === null ? null : String(r[`${m}_pct`])]),
    ) as CurrencyTotals['changePct'],
  }));
}

/**
 * The statuses of the group's open months that revenue_monthly counts otherwise than `statuses` do (recognised in
 * the mart and not in the rule, or the reverse): the warehouse was built under another PERKS_REVENUE_STATUSES.
 * Closed months keep the rule they were closed under and are not compared. Null: the mart has no is_recognised
 * (built by a version before it).
 */
export async function ruleDisagreements(
  wh: Warehouse,
  groupId: number,
  statuses: readonly string[],
): Promise<string[] | null> {
  const [has] = await wh.all(
    `SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'revenue_monthly' AND column_name = 'is_recognised'`,
  );
  if (Number(has.n) === 0) return null;
  const rows = await wh.all(
    `SELECT DISTINCT coalesce(order_status, '') AS status FROM revenue_monthly
    WHERE organisation_group_id = $group AND NOT is_closed
      AND is_recognised <> coalesce(list_contains(string_split($statuses, ','), order_status), false)
    ORDER BY 1`,
    { group: groupId, statuses: statuses.join(',') },
  );
  return rows.map((r) => String(r.status));
}

/** This month by order_status, per currency. */
export async function statusLines(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
): Promise<Map<string, StatusLine[]>> {
  const rows = await wh.all(
    `SELECT coalesce(order_currency, '') AS currency, coalesce(order_status, '') AS status,
      ${sums()}
    FROM revenue_monthly
    WHERE organisation_group_id = $group AND month = $cur::DATE
    GROUP BY 1, 2 ORDER BY 1, 2`,
    { group: groupId, cur: month.start },
  );
  return groupBy(rows, (r) => ({ status: String(r.status), values: pick(r) }));
}

/** Top five brands by group revenue this month, per currency (ties by brand name). */
export async function topBrands(wh: Warehouse, month: ReportMonth, groupId: number): Promise<Map<string, BrandLine[]>> {
  const rows = await wh.all(
    `SELECT coalesce(order_currency, '') AS currency, coalesce(brand, '(no brand)') AS brand,
      count(*) AS orders, coalesce(sum(group_revenue), 0) AS group_revenue,
      CAST(round(coalesce(sum(group_revenue), 0) * 100 / nullif(sum(coalesce(sum(group_revenue), ` +
      `0)) OVER (PARTITION BY coalesce(order_currency, '')), 0), 1) AS DECIMAL(18,1)) AS share
    FROM stg_orders
    WHERE organisation_group_id = $group AND order_date >= $cur::DATE AND order_date < $next::DATE
    GROUP BY 1, 2
    QUALIFY row_number() OVER (PARTITION BY coalesce(order_currency, '') ORDER BY coalesce(sum(group_revenue), 0) DESC, 2) <= 5
    ORDER BY 1, 4 DESC, 2`,
    { group: groupId, cur: month.start, next: month.next },
  );
  return groupBy(rows, (r) => ({
    brand: String(r.brand),
    orders: String(r.orders),
    group_revenue: String(r.group_revenue),
    share: r.share === null ? null : String(r.share),
  }));
}

/** Orders and group revenue for every day of the month (zeros included), per currency with orders. */
export async function dailyLines(wh: Warehouse, month: ReportMonth, groupId: number): Promise<Map<string, DayLine[]>> {
  const rows = await wh.all(
    `WITH orders AS (
      SELECT coalesce(order_currency, '') AS currency, order_date AS day, group_revenue
      FROM stg_orders
      WHERE organisation_group_id = $group AND order_date >= $cur::DATE AND order_date < $next::DATE
    ),
    days AS (SELECT CAST(d AS DATE) AS day FROM range($cur::DATE, $next::DATE, INTERVAL 1 DAY) AS t(d)),
    currencies AS (SELECT DISTINCT currency FROM orders)
    SELECT c.currency, strftime(d.day, '%Y-%m-%d') AS day, count(o.day) AS orders, coalesce(sum(o.group_revenue), 0) AS group_revenue
    FROM currencies c CROSS JOIN days d LEFT JOIN orders o ON o.currency = c.currency AND o.day = d.day
    GROUP BY 1, 2 ORDER BY 1, 2`,
    { group: groupId, cur: month.start, next: month.next },
  );
  return groupBy(rows, (r) => ({
    day: String(r.day),
    orders: String(r.orders),
    group_revenue: String(r.group_revenue),
  }));
}

function groupBy<T>(rows: Row[], map: (r: Row) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const key = String(r.currency);
    out.set(key, [...(out.get(key) ?? []), map(r)]);
  }
  return out;
}

export const ADJUSTMENT_LINES = 100;

/** Adjustments to closed months booked in this month: totals per closed month and currency, and the first lines. */
export async function adjustmentsBooked(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
): Promise<Adjustments | undefined> {
  if (!wh.tables.has('revenue_adjustments')) return undefined;
  const params = { group: groupId, cur: month.start };
  // Recognised under the rule the closed month was closed under (the mart's before/after_is_recognised).
  const recognised = (flag: string, revenue: string) => `CASE WHEN ${flag} THEN coalesce(${revenue}, 0) ELSE 0 END`;
  // A change leaves the cell it was in (its currency and status before) and enters the one it is in now, so each
  // currency's totals are its own: an order moved to another currency takes its money from one to the other.
  // Each change is counted once, in its currency now (a removed order: its currency before).
  const totals = await wh.all(
    `WITH adjustments AS (
      SELECT * FROM revenue_adjustments WHERE organisation_group_id = $group AND booked_month = $cur::DATE
    ), legs AS (
      SELECT month, before_currency AS currency, 0 AS changes, 0 AS late, 0 AS removed,
        -coalesce(before_group_revenue, 0) AS group_revenue, -(${recognised('before_is_recognised', 'before_group_revenue')}) AS recognised
      FROM adjustments WHERE adjustment_kind NOT IN ('late order', 'listed again')
      UNION ALL
      SELECT month, order_currency, 1, CASE WHEN adjustment_kind IN ('late order', 'listed again') THEN 1 ELSE 0 END,
        CASE WHEN adjustment_kind = 'removed' THEN 1 ELSE 0 END,
        coalesce(after_group_revenue, 0), ${recognised('after_is_recognised', 'after_group_revenue')}
      FROM adjustments
    )
    SELECT strftime(month, '%Y-%m') AS month, coalesce(currency, '') AS currency, sum(changes) AS changes, sum(late) AS orders,
      sum(removed) AS removed, sum(group_revenue) AS group_revenue, sum(recognised) AS recognised_revenue
    FROM legs GROUP BY 1, 2 ORDER BY 1, 2`,
    params,
  );
  const lines = await wh.all(
    `SELECT strftime(month, '%Y-%m') AS month, order_id, strftime(observed_at, '%Y-%m-%dT%H:%M:%SZ') AS observed_at, adjustment_kind AS kind,
      before_status, coalesce(after_status, '') AS after_status, coalesce(order_currency, '') AS currency, ` +
      `before_group_revenue, coalesce(after_group_revenue, 0) AS after_group_revenue
    FROM revenue_adjustments WHERE organisation_group_id = $group AND booked_month = $cur::DATE
    ORDER BY month, order_id, observed_at LIMIT ${ADJUSTMENT_LINES}`,
    { group: groupId, cur: month.start },
  );
  const changes = totals.reduce((n, t) => n + Number(t.changes), 0);
  return {
    totals: totals.map((t) => ({
      month: String(t.month),
      currency: String(t.currency),
      changes: String(t.changes),
      orders: String(t.orders),
      removed: String(t.removed),
      group_revenue: String(t.group_revenue),
      recognised_revenue: String(t.recognised_revenue),
    })),
    lines: lines.map((l) => ({
      month: String(l.month),
      orderId: String(l.order_id),
      observedAt: String(l.observed_at),
      kind: String(l.kind),
      beforeStatus: l.before_status === null ? null : String(l.before_status),
      afterStatus: String(l.after_status),
      currency: String(l.currency),
      beforeRevenue: l.before_group_revenue === null ? null : String(l.before_group_revenue),
      afterRevenue: String(l.after_group_revenue),
    })),
    more: Math.max(0, changes - lines.length),
  };
}

export const PLATFORM_LINES = 20;

/** The platform's statistics against the lake for one group and month, from reconciliation_platform. */
export async function platformCheck(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
): Promise<PlatformCheck | undefined> {
  if (!wh.tables.has('reconciliation_platform')) return undefined;
  const params = { group: groupId, cur: month.start };
  const counts = await wh.all(
    `SELECT result, coalesce(explanation, '') AS reason, count(*) AS n FROM reconciliation_platform
    WHERE organisation_group_id = $group AND month = $cur::DATE GROUP BY 1, 2 ORDER BY 1, 2`,
    params,
  );
  // our orders of each user listed that are not Complete, by status: the statistics count them with no status
  const statuses = wh.tables.has('stg_orders')
    ? `(SELECT string_agg(n || ' ' || order_status, ', ' ORDER BY order_status) FROM (
        SELECT o.order_status, count(*) AS n FROM stg_orders o
        WHERE o.organisation_group_id = r.organisation_group_id AND o.user_id = r.user_id
          AND o.order_date >= $cur::DATE AND o.order_date <= last_day($cur::DATE) AND o.order_status IS DISTINCT FROM 'Complete'
        GROUP BY 1))`
    : 'NULL';
  const rows = await wh.all(
    `SELECT user_id, platform_orders, lake_orders, platform_egift_orders, lake_complete_orders, face_value_difference, cost_difference, savings_difference,
      ${statuses} AS other_statuses
    FROM (FROM reconciliation_platform WHERE organisation_group_id = $group AND month = $cur::DATE AND result = 'differs'
      ORDER BY user_id LIMIT ${PLATFORM_LINES}) AS r
    ORDER BY user_id`,
    params,
  );
  const n = (result: string) => counts.filter((c) => c.result === result).reduce((t, c) => t + Number(c.n), 0);
  const text = (v: Row[string]) => (v === null ? null : String(v));
  return {
    available: counts.length > 0,
    matched: n('matched'),
    explained: counts
      .filter((c) => c.result === 'explained')
      .map((c) => ({ reason: String(c.reason), rows: Number(c.n) })),
    differs: n('differs'),
    differences: rows.map((r) => ({
      userId: String(r.user_id),
      platformOrders: text(r.platform_orders),
      lakeOrders: String(r.lake_orders),
      platformEgiftOrders: text(r.platform_egift_orders),
      lakeCompleteOrders: String(r.lake_complete_orders),
      faceValue: String(r.face_value_difference),
      cost: String(r.cost_difference),
      savings: String(r.savings_difference),
      otherStatuses: r.other_statuses === null ? '' : String(r.other_statuses),
    })),
  };
}

/** The group's credit liability at the end of the month, from credit_liability_monthly. */
export async function creditLiability(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
): Promise<CreditLiability | undefined> {
  if (!wh.tables.has('credit_liability_monthly')) return undefined;
  const [r] = await wh.all(
    // every column: stale_balances is absent from a warehouse built before it (issue 25)
    `SELECT *, strftime(month_end, '%Y-%m-%d') AS month_end_day, strftime(oldest_snapshot_date, '%Y-%m-%d') AS oldest
    FROM credit_liability_monthly WHERE organisation_group_id = $group AND month = $cur::DATE`,
    { group: groupId, cur: month.start },
  );
  if (!r) return undefined;
  return {
    monthEnd: String(r.month_end_day),
    users: String(r.users),
    available: String(r.credit_available),
    granted: String(r.credit_granted),
    spent: String(r.credit_spent),
    expired: String(r.credit_expired),
    oldestSnapshot: String(r.oldest),
    ...(r.stale_balances === undefined ? {} : { staleBalances: String(r.stale_balances) }),
  };
}

/** Changes to closed months' credit liability booked in this month, from credit_adjustments; undefined when none. */
export async function creditAdjustmentsBooked(
  wh: Warehouse,
  month: ReportMonth,
  groupId: number,
): Promise<CreditAdjustment[] | undefined> {
  if (!wh.tables.has('credit_adjustments')) return undefined;
  const rows = await wh.all(
    `SELECT strftime(month, '%Y-%m') AS month, strftime(observed_at, '%Y-%m-%dT%H:%M:%SZ') AS observed_at, ` +
      `users_change, credit_available_change, credit_granted_change, credit_spent_change, credit_expired_change
    FROM credit_adjustments WHERE organisation_group_id = $group AND booked_month = $cur::DATE ORDER BY month`,
    { group: groupId, cur: month.start },
  );
  if (rows.length === 0) return undefined;
  return rows.map((r) => ({
    month: String(r.month),
    observedAt: String(r.observed_at),
    users: String(r.users_change),
    available: String(r.credit_available_change),
    granted: String(r.credit_granted_change),
    spent: String(r.credit_spent_change),
    expired: String(r.credit_expired_change),
  }));
}

/**
 * Why a group has no credit liability for the month, in one sentence with what to do (issue 43): the mart is
 * missing, no credit was ever read for the group, or its first read came after the month's end (balances are
 * snapshots read per user on a refresh cycle, and a balance cannot be read back in time).
 */
export async function creditGap(wh: Warehouse, month: ReportMonth, group: GroupInfo): Promise<string> {
  if (!wh.tables.has('credit_liability_monthly'))
    return (
      `the warehouse has no credit_liability_monthly (built without the credit stream or by an earlier version): ` +
      `run \`perks extract --streams credit\` and \`perks build\`.`
    );
  const [r] = await wh.all(
    `SELECT strftime(min(month), '%Y-%m') AS first_month, strftime(max(month), '%Y-%m') AS last_month,
      strftime(min(oldest_snapshot_date), '%Y-%m-%d') AS first_read
    FROM credit_liability_monthly WHERE organisation_group_id = $group`,
    { group: group.groupId },
  );
  if (!r?.first_month)
    return (
      `no credit has been extracted for it, so there is no liability to show: ` +
      `run \`perks extract --streams credit\` (\`perks run\` includes it), then \`perks build\` and this report again.`
    );
  if (String(r.first_month) > month.ym)
    return (
      `no credit liability for ${month.label}, because credit balances are read per user as snapshots, ` +
      `the first read is of ${String(r.first_read)}, after the month's end, and a balance cannot be read back in time; ` +
      `every month from ${String(r.first_month)} has its figure (keep the credit extract running over each month end, ` +
      `as \`perks run\` does, so that every later month has one).`
    );
  return (
    `no credit read covers ${month.label} yet (the last month with credit is ${String(r.last_month)}): ` +
    `run \`perks extract --streams credit\` and \`perks build\`, then this report again.`
  );
}
