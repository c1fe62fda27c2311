/**
 * One line for `perks run`'s summary: which months are signed off (the close record), which are final by the
 * extract's watermark (past the lookback: the data will not change, but nobody signed them off), which are still
 * provisional, and which signed-off months have adjustments. `perks run` never signs a month off itself: that is
 * a person's decision (`perks close`).
 */
import { closesInForce, readCloses } from '../closes/index.js';
import { lastClosedMonth } from './closure.js';
import { openWarehouse } from './warehouse.js';

export async function closeSummary(outDir: string, groups: readonly number[]): Promise<string> {
  const inForce = [...closesInForce(await readCloses(outDir)).values()];
  const signed = inForce.length === 0 ? 'none' : groupMonths(inForce.map((r) => [r.organisation_group_id, r.month]));
  const closedTo = await lastClosedMonth(outDir, groups);
  let adjusted = 'none';
  const wh = await openWarehouse(outDir).catch(() => undefined);
  if (wh) {
    try {
      if (wh.tables.has('revenue_adjustments')) {
        const rows = await wh.all(
          `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS m, count(*) AS n FROM revenue_adjustments GROUP BY 1, 2 ORDER BY 1, 2`,
        );
        if (rows.length > 0)
          adjusted = rows.map((r) => `group ${r.g} ${r.m} (${r.n} change${r.n === '1' ? '' : 's'})`).join(', ');
      }
      if (wh.tables.has('credit_adjustments')) {
        const rows = await wh.all(
          `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS m FROM credit_adjustments ORDER BY 1, 2`,
        );
        const credit = rows.map((r) => `group ${r.g} ${r.m} (credit liability)`).join(', ');
        if (credit) adjusted = adjusted === 'none' ? credit : `${adjusted}, ${credit}`;
      }
    } finally {
      wh.close();
    }
  }
  return `signed off: ${signed}; final through ${closedTo ?? '(none yet)'}, later months provisional; adjusted: ${adjusted}`;
}

function groupMonths(pairs: [number, string][]): string {
  const by = new Map<number, string[]>();
  for (const [g, m] of pairs) by.set(g, [...(by.get(g) ?? []), m]);
  return [...by]
    .sort(([a], [b]) => a - b)
    .map(([g, ms]) => `group ${g} ${ms.sort().join(', ')}`)
    .join('; ');
}
