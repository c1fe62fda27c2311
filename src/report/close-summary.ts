/**
 * One line for `perks run`'s summary: each month's state over the groups, in the words of the marts and the report
 * (partial, provisional, final, signed off: src/closes/month-state.ts), which months each group has signed off
 * (the close record), and which signed-off months have adjustments. `perks run` never signs a month off itself:
 * that is a person's decision (`perks close`).
 */
import {
  closesInForce,
  monthStatesOf,
  monthStatesText,
  readCloses,
  readOrdersState,
  statesOverGroups,
  type CloseRecord,
  type MonthState,
} from '../closes/index.js';
import { openWarehouse } from './warehouse.js';
import type { Output } from '../output/index.js';

export async function closeSummary(output: Output, groups: readonly number[]): Promise<string> {
  const outDir = output.dir;
  const inForce = [...closesInForce(await readCloses(output)).values()];
  const signed = inForce.length === 0 ? 'none' : groupMonths(inForce.map((r) => [r.organisation_group_id, r.month]));
  const months = await statesOverTheGroups(outDir, groups, inForce);
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
  return `months: ${months}; signed off: ${signed}; adjusted: ${adjusted}`;
}

/** Each month a group holds, its state over the groups that hold it (statesOverGroups, the report's rule). */
async function statesOverTheGroups(
  outDir: string,
  groups: readonly number[],
  inForce: readonly CloseRecord[],
): Promise<string> {
  const byMonth = new Map<string, MonthState[]>();
  for (const g of groups) {
    const signed = inForce.filter((r) => r.organisation_group_id === g).map((r) => r.month);
    for (const { month, state } of monthStatesOf(await readOrdersState(outDir, g), signed))
      byMonth.set(month, [...(byMonth.get(month) ?? []), state]);
  }
  const months = [...byMonth].sort(([a], [b]) => a.localeCompare(b));
  return monthStatesText(months.map(([month, states]) => ({ month, state: statesOverGroups(states) })));
}

function groupMonths(pairs: [number, string][]): string {
  const by = new Map<number, string[]>();
  for (const [g, m] of pairs) by.set(g, [...(by.get(g) ?? []), m]);
  return [...by]
    .sort(([a], [b]) => a - b)
    .map(([g, ms]) => `group ${g} ${ms.sort().join(', ')}`)
    .join('; ');
}
