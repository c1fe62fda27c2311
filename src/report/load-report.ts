/**
 * Gathers the report's data from the warehouse, the lake and the extract state, after checking the
 * inputs: a known group, and a month the warehouse holds (or the extract has reached).
 */
import { readClosures, type GroupClosure } from './closure.js';
import { ReportInputError } from './errors.js';
import type { CurrencySection, GroupSection, RevenueReport } from './model.js';
import { addDays, type ReportMonth } from './month.js';
import { currencyTotals, dailyLines, listGroups, monthsHeld, statusLines, topBrands, type GroupInfo } from './queries.js';
import { reconcile } from './reconcile.js';
import type { Warehouse } from './warehouse.js';
import { relative } from 'node:path';
import { now } from '../shared/clock.js';

export async function loadReport(wh: Warehouse, outDir: string, month: ReportMonth, groupFilter?: number): Promise<RevenueReport> {
  const groups = await selectGroups(wh, groupFilter);
  const closures = await readClosures(outDir, month, groups.map((g) => g.groupId));
  await requireMonthHeld(wh, month, groups, closures);
  const sections: GroupSection[] = [];
  for (const [i, group] of groups.entries()) sections.push(await groupSection(wh, month, group, closures[i]));
  return {
    month,
    status: closures.every((c) => c.status === 'closed') ? 'closed' : 'provisional',
    groupFilter,
    generatedAt: now().toISOString().replace(/\.\d+Z$/, 'Z'),
    // Relative to <out>: a report is shared, and the machine's paths are nobody else's business.
    warehouse: relative(outDir, wh.path).split('\\').join('/'),
    groups: sections,
    reconciliation: await reconcile(wh, outDir, month, groups.map((g) => g.groupId), groupFilter),
  };
}

async function selectGroups(wh: Warehouse, groupFilter?: number): Promise<GroupInfo[]> {
  const all = await listGroups(wh);
  if (all.length === 0) throw new ReportInputError(`the warehouse ${wh.path} holds no groups yet: run \`perks run\` (extract and build) first`);
  if (groupFilter === undefined) return all;
  const found = all.filter((g) => g.groupId === groupFilter);
  if (found.length === 0) throw new ReportInputError(`--group=${groupFilter} is not in the warehouse; its groups are ${all.map((g) => g.groupId).join(', ')}`);
  return found;
}

/**
 * A month is reportable when it lies within what the data covers: from the earlier of the first month the
 * mart holds and the month the extract started, to the later of the last month the mart holds and the
 * month the extract has reached. A month without orders inside that span is a real zero; outside it the
 * warehouse simply has no data, and a report of zeros would mislead.
 */
async function requireMonthHeld(wh: Warehouse, month: ReportMonth, groups: GroupInfo[], closures: GroupClosure[]): Promise<void> {
  let first: string | undefined;
  let last: string | undefined;
  for (const [i, g] of groups.entries()) {
    const held = await monthsHeld(wh, g.groupId);
    const watermark = closures[i].watermark;
    const reached = watermark === undefined ? undefined : addDays(watermark, -1).slice(0, 7);
    const started = closures[i].firstDay?.slice(0, 7);
    const lo = [held?.first, started].filter((v): v is string => v !== undefined).sort().at(0);
    const hi = [held?.last, reached].filter((v): v is string => v !== undefined).sort().at(-1);
    if (lo !== undefined && (first === undefined || lo < first)) first = lo;
    if (hi !== undefined && (last === undefined || hi > last)) last = hi;
  }
  if (first === undefined || last === undefined) throw new ReportInputError(`the warehouse ${wh.path} holds no revenue yet for ${groups.length === 1 ? `group ${groups[0].groupId}` : 'any group'}`);
  if (month.ym < first || month.ym > last) {
    throw new ReportInputError(`--month=${month.ym} is not in the warehouse: it holds ${first === last ? first : `${first} to ${last}`}`);
  }
}

async function groupSection(wh: Warehouse, month: ReportMonth, group: GroupInfo, closure: GroupClosure): Promise<GroupSection> {
  const [totals, statuses, brands, daily] = [
    await currencyTotals(wh, month, group.groupId),
    await statusLines(wh, month, group.groupId),
    await topBrands(wh, month, group.groupId),
    await dailyLines(wh, month, group.groupId),
  ];
  const currencies: CurrencySection[] = totals.map((t) => ({
    ...t,
    byStatus: statuses.get(t.currency) ?? [],
    topBrands: brands.get(t.currency) ?? [],
    daily: daily.get(t.currency) ?? [],
  }));
  return { groupId: group.groupId, name: group.name, timezone: group.timezone, closure, currencies };
}
