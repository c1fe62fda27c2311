/**
 * The headline's totals: recognised revenue and the other statuses per currency, over the groups the totals count
 * (test groups left out unless asked). The rows shown are summed by DuckDB as DECIMAL, so a total is exactly the sum
 * of the lines above it, whether a group's figures are live or as signed off.
 */
import type { GroupSection } from '../closes/index.js';
import type { CurrencyTotal } from './model.js';
import type { Warehouse } from './warehouse.js';

export async function headlineTotals(
  wh: Warehouse,
  sections: readonly GroupSection[],
  isCounted: (groupId: number) => boolean,
): Promise<CurrencyTotal[]> {
  const items = sections
    .filter((g) => isCounted(g.groupId))
    .flatMap((g) =>
      g.currencies.map((c) => ({
        c: c.currency,
        n: c.recognised.current.orders,
        r: c.recognised.current.group_revenue,
        on: c.other.orders,
        o: c.other.group_revenue,
      })),
    );
  if (items.length === 0) return [];
  const rows = await wh.all(
    `WITH items AS (SELECT unnest(from_json($items, '["json"]')) AS j)
    SELECT j->>'c' AS currency,
      CAST(sum(CAST(j->>'n' AS BIGINT)) AS BIGINT) AS orders, CAST(sum(CAST(j->>'r' AS DECIMAL(38,2))) AS DECIMAL(38,2)) AS recognised,
      CAST(sum(CAST(j->>'on' AS BIGINT)) AS BIGINT) AS other_orders, CAST(sum(CAST(j->>'o' AS DECIMAL(38,2))) AS DECIMAL(38,2)) AS other
    FROM items GROUP BY 1 ORDER BY 1`,
    { items: JSON.stringify(items) },
  );
  return rows.map((r) => ({
    currency: String(r.currency),
    orders: String(r.orders),
    recognised: String(r.recognised),
    otherOrders: String(r.other_orders),
    other: String(r.other),
  }));
}
