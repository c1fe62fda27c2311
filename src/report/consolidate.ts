/**
 * Consolidated totals in the reporting currency: each group's currencies × the month's rates, summed exactly
 * by DuckDB. A group whose month is signed off uses the rates its close froze (`frozen`, same reporting
 * currency), never the rates file's current ones.
 */
import { rateOf, type FxRates, type GroupSection } from '../closes/index.js';
import type { Consolidated } from './model.js';
import type { ReportMonth } from './month.js';
import type { Warehouse } from './warehouse.js';

/** Rates a close froze, per group: currency → rate into `reportingCurrency`. */
export type FrozenRates = ReadonlyMap<
  number,
  { readonly reportingCurrency: string; readonly rates: Readonly<Record<string, string>> }
>;

export async function consolidate(
  wh: Warehouse,
  month: ReportMonth,
  sections: readonly GroupSection[],
  fx: FxRates,
  frozen: FrozenRates = new Map(),
  isCounted: (groupId: number) => boolean = () => true,
): Promise<Consolidated> {
  const items: { g: number; x: boolean; r: string; a: string; t: string }[] = [];
  const missing = new Map<number, string[]>();
  const used = new Set<string>();
  for (const g of sections) {
    for (const c of g.currencies) {
      if (c.current.orders === '0') continue;
      const held = frozen.get(g.groupId);
      const rate =
        c.currency === ''
          ? undefined
          : held && held.reportingCurrency === fx.reportingCurrency
            ? c.currency === fx.reportingCurrency
              ? '1'
              : held.rates[c.currency]
            : rateOf(fx, month.ym, c.currency);
      if (rate === undefined) {
        missing.set(g.groupId, [...(missing.get(g.groupId) ?? []), c.currency || '(no currency)']);
        continue;
      }
      if (c.currency !== fx.reportingCurrency) used.add(`${c.currency} ${rate}`);
      items.push({
        g: g.groupId,
        x: !isCounted(g.groupId),
        r: rate,
        a: c.recognised.current.group_revenue,
        t: c.current.group_revenue,
      });
    }
  }
  // Amounts and rates go in as one JSON parameter; DuckDB multiplies and sums them as DECIMAL. The total leaves
  // out the groups not counted (test groups), which keep their own row.
  const rows = await wh.all(
    `WITH items AS (SELECT unnest(from_json($items, '["json"]')) AS j),
    converted AS (
      SELECT CAST(j->>'g' AS BIGINT) AS g, CAST(j->>'x' AS BOOLEAN) AS x,
        CAST(j->>'a' AS DECIMAL(38,2)) * CAST(j->>'r' AS DECIMAL(22,10)) AS recognised,
        CAST(j->>'t' AS DECIMAL(38,2)) * CAST(j->>'r' AS DECIMAL(22,10)) AS total
      FROM items
    )
    SELECT g, CAST(round(sum(recognised), 2) AS DECIMAL(38,2)) AS recognised, CAST(round(sum(total), 2) AS DECIMAL(38,2)) AS total
    FROM converted GROUP BY g
    UNION ALL
    SELECT NULL, CAST(round(coalesce(sum(recognised), 0), 2) AS DECIMAL(38,2)), CAST(round(coalesce(sum(total), 0), 2) AS DECIMAL(38,2))
    FROM converted WHERE NOT x
    ORDER BY g NULLS LAST`,
    { items: JSON.stringify(items) },
  );
  const byGroup = new Map(rows.filter((r) => r.g !== null).map((r) => [Number(r.g), r]));
  const all = rows.find((r) => r.g === null);
  return {
    currency: fx.reportingCurrency,
    file: fx.file,
    groups: sections.map((g) => ({
      groupId: g.groupId,
      name: g.name,
      recognised: String(byGroup.get(g.groupId)?.recognised ?? '0.00'),
      groupRevenue: String(byGroup.get(g.groupId)?.total ?? '0.00'),
      converted: byGroup.has(g.groupId) || !missing.has(g.groupId),
      missing: missing.get(g.groupId) ?? [],
    })),
    total: { recognised: String(all?.recognised ?? '0.00'), groupRevenue: String(all?.total ?? '0.00') },
    // The total is incomplete for the currencies left out of the groups it counts.
    missing: [
      ...new Set(
        [...missing]
          .filter(([g]) => isCounted(g))
          .map(([, m]) => m)
          .flat(),
      ),
    ].sort(),
    used: [...used].sort(),
  };
}
