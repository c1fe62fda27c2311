/**
 * Gathers the report's data from the warehouse, the lake and the extract state, after checking the
 * inputs: a known group, and a month the warehouse holds (or the extract has reached).
 */
import { readClosures } from './closure.js';
import {
  monthStatesOf,
  readOrdersState,
  statesOverGroups,
  type GroupClosure,
  type MonthState,
} from '../closes/index.js';
import { ReportInputError } from './errors.js';
import { counted, type RevenueReport, type TestGroups } from './model.js';
import { headlineTotals } from './headline-totals.js';
import { loadTrend } from './trend.js';
import {
  MEASURES,
  type CurrencySection,
  type GroupSection,
  type Measures,
  type ReconciliationLine,
} from '../closes/index.js';
import { isKnownStatus, type RevenueRule } from './revenue-rule.js';
import { addDays, comparedDays, type ReportMonth } from './month.js';
import {
  closeKey,
  closesInForce,
  forcedBecause,
  frozenFigures,
  readCloses,
  type CloseRecord,
  type FrozenFx,
  type FxRates,
} from '../closes/index.js';
import {
  adjustmentsBooked,
  creditAdjustmentsBooked,
  creditGap,
  creditLiability,
  platformCheck,
  currencyTotals,
  dailyLines,
  listGroups,
  monthsHeld,
  ruleDisagreements,
  statusLines,
  topBrands,
  type GroupInfo,
} from './queries.js';
import { reconcile } from './reconcile.js';
import { consolidate } from './consolidate.js';
import type { Warehouse } from './warehouse.js';
import { relative } from 'node:path';
import { DEFAULTS } from '../config/index.js';
import { now } from '../shared/clock.js';
import type { Output } from '../output/index.js';

export async function loadReport(
  wh: Warehouse,
  output: Output,
  month: ReportMonth,
  groupFilter?: number,
  rule: RevenueRule = { statuses: DEFAULTS.revenueStatuses },
  fx?: FxRates,
  options: { readonly includeTestGroups?: boolean } = {},
): Promise<RevenueReport> {
  const groups = await selectGroups(wh, groupFilter);
  const testGroups: TestGroups = {
    groups: groups.filter((g) => g.isTest).map((g) => ({ groupId: g.groupId, name: g.name })),
    // A report of one group asked for by id counts it, test group or not.
    included: options.includeTestGroups === true || groupFilter !== undefined,
  };
  const isCounted = (id: number) => counted({ testGroups }, id);
  const outDir = output.dir;
  const closures = await readClosures(
    outDir,
    month,
    groups.map((g) => g.groupId),
  );
  await requireMonthHeld(wh, month, groups, closures);
  // A month signed off for a group is shown as the close froze it (the record is verified first).
  const inForce = closesInForce(await readCloses(output));
  const signed = new Map(
    groups.flatMap((g) => {
      const r = inForce.get(closeKey(g.groupId, month.ym));
      return r ? [[g.groupId, r] as const] : [];
    }),
  );
  const sections: GroupSection[] = [];
  for (const [i, group] of groups.entries()) {
    const record = signed.get(group.groupId);
    sections.push(record ? frozenSection(record) : await groupSection(wh, month, group, closures[i], rule));
  }
  const live = groups.map((g) => g.groupId).filter((id) => !signed.has(id));
  const frozen = [...signed.values()].map((r) => frozenFigures(r).reconciliation);
  const liveRec = live.length === 0 ? undefined : await reconcile(wh, outDir, month, live, groupFilter);
  const lines = [...frozen.flatMap((f) => f.lines), ...(liveRec?.lines ?? [])].sort(
    (a, b) => a.groupId - b.groupId || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0),
  );
  const unavailable = [...frozen, ...(liveRec ? [liveRec] : [])].find((f) => !f.available);
  const differences = lines.filter((l) => liveRec?.differences.includes(l) || (signed.has(l.groupId) && differs(l)));
  const rules = [...signed.values()].map((r) => frozenFigures(r).revenue_statuses);
  return {
    month,
    status: statesOverGroups(sections.map((s) => (s.signoff !== undefined ? 'signed_off' : s.closure.state))),
    groupFilter,
    generatedAt: now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z'),
    // Relative to <out>: a report is shared, and the machine's paths are nobody else's business.
    warehouse: relative(outDir, wh.path).split('\\').join('/'),
    groups: sections,
    reconciliation: unavailable
      ? { available: false, note: unavailable.note, lines: [], differences: [], reconciled: false }
      : { available: true, lines, differences, reconciled: differences.length === 0 },
    ...consolidation(await consolidationOf(wh, month, sections, fx, signed, isCounted)),
    // Every group signed off: the rule the closes used (the same figures, the same sentence).
    revenueRule: live.length === 0 && rules.length > 0 ? { statuses: rules[0] } : rule,
    testGroups,
    creditGaps: await creditGaps(wh, month, groups, sections),
    totals: await headlineTotals(wh, sections, isCounted),
    trend: await loadTrend(
      wh,
      month,
      await Promise.all(
        groups.map(async (g, i) => ({
          groupId: g.groupId,
          name: g.name,
          counted: isCounted(g.groupId),
          firstDay: closures[i].firstDay,
          states: await monthStatesByMonth(outDir, g.groupId, inForce),
        })),
      ),
    ),
  };
}

/**
 * The consolidated totals. A report whose groups are all signed off with frozen rates (one reporting currency,
 * one file name) is consolidated as signed, with or without PERKS_FX_RATES today: a closed month's report
 * does not depend on the environment it is generated in. Otherwise, with PERKS_FX_RATES, signed-off groups
 * convert at the rates their close froze (same reporting currency) and the others at the file's.
 */
async function consolidationOf(
  wh: Warehouse,
  month: ReportMonth,
  sections: GroupSection[],
  fx: FxRates | undefined,
  signed: ReadonlyMap<number, CloseRecord>,
  isCounted: (groupId: number) => boolean,
): Promise<RevenueReport['consolidated']> {
  const frozen = new Map<number, FrozenFx>();
  for (const [g, r] of signed) {
    const f = frozenFigures(r).fx;
    if (f) frozen.set(g, f);
  }
  const rates = new Map(
    [...frozen].map(([g, f]) => [g, { reportingCurrency: f.reporting_currency, rates: f.rates }] as const),
  );
  const all = [...frozen.values()];
  const asSigned =
    sections.length > 0 &&
    all.length === sections.length &&
    new Set(all.map((f) => `${f.reporting_currency}\n${f.file}`)).size === 1;
  if (asSigned)
    return consolidate(
      wh,
      month,
      sections,
      { file: all[0].file, reportingCurrency: all[0].reporting_currency, rates: new Map() },
      rates,
      isCounted,
    );
  return fx ? consolidate(wh, month, sections, fx, rates, isCounted) : undefined;
}

async function creditGaps(
  wh: Warehouse,
  month: ReportMonth,
  groups: readonly GroupInfo[],
  sections: readonly GroupSection[],
): Promise<string[]> {
  const gaps: [GroupInfo, string][] = [];
  for (const [i, g] of groups.entries()) if (!sections[i].credit) gaps.push([g, await creditGap(wh, month, g)]);
  // Every group for the same reason: one sentence, not one per group.
  if (gaps.length > 1 && gaps.length === groups.length && new Set(gaps.map(([, why]) => why)).size === 1)
    return [`Every group: ${gaps[0][1]}`];
  return gaps.map(([g, why]) => `${g.name} (group ${g.groupId}): ${why}`);
}

const consolidation = (c: RevenueReport['consolidated']) => (c ? { consolidated: c } : {});

function frozenSection(record: CloseRecord): GroupSection {
  const figures = frozenFigures(record);
  return {
    ...figures.section,
    signoff: {
      by: record.by,
      at: record.at,
      seq: record.seq,
      hash: record.hash,
      note: record.note,
      forced: record.forced,
      ...(record.forced ? { forcedBecause: forcedBecause(record) } : {}),
    },
  };
}

const differs = (l: ReconciliationLine) =>
  !/^-?0*(\.0*)?$/.test(l.difference) || (l.mart === null) !== (l.lake === null);

async function selectGroups(wh: Warehouse, groupFilter?: number): Promise<GroupInfo[]> {
  const all = await listGroups(wh);
  if (all.length === 0)
    throw new ReportInputError(
      `the warehouse ${wh.path} holds no groups yet: run \`perks run\` (extract and build) first`,
    );
  if (groupFilter === undefined) return all;
  const found = all.filter((g) => g.groupId === groupFilter);
  if (found.length === 0)
    throw new ReportInputError(
      `--group=${groupFilter} is not in the warehouse; its groups are ${all.map((g) => g.groupId).join(', ')}`,
    );
  return found;
}

/**
 * A month is reportable when it lies within what the data covers: from the earlier of the first month the
 * mart holds and the month the extract started, to the later of the last month the mart holds and the
 * month the extract has reached. A month without orders inside that span is a real zero; outside it the
 * warehouse simply has no data, and a report of zeros would mislead.
 */
async function requireMonthHeld(
  wh: Warehouse,
  month: ReportMonth,
  groups: GroupInfo[],
  closures: GroupClosure[],
): Promise<void> {
  let first: string | undefined;
  let last: string | undefined;
  for (const [i, g] of groups.entries()) {
    const held = await monthsHeld(wh, g.groupId);
    const watermark = closures[i].watermark;
    const reached = watermark === undefined ? undefined : addDays(watermark, -1).slice(0, 7);
    const started = closures[i].firstDay?.slice(0, 7);
    const lo = [held?.first, started]
      .filter((v): v is string => v !== undefined)
      .sort()
      .at(0);
    const hi = [held?.last, reached]
      .filter((v): v is string => v !== undefined)
      .sort()
      .at(-1);
    if (lo !== undefined && (first === undefined || lo < first)) first = lo;
    if (hi !== undefined && (last === undefined || hi > last)) last = hi;
  }
  if (first === undefined || last === undefined)
    throw new ReportInputError(
      `the warehouse ${wh.path} holds no revenue yet for ${groups.length === 1 ? `group ${groups[0].groupId}` : 'any group'}`,
    );
  if (month.ym < first || month.ym > last) {
    throw new ReportInputError(
      `--month=${month.ym} is not in the warehouse: it holds ${first === last ? first : `${first} to ${last}`}`,
    );
  }
}

export async function groupSection(
  wh: Warehouse,
  month: ReportMonth,
  group: GroupInfo,
  closure: GroupClosure,
  rule: RevenueRule,
): Promise<GroupSection> {
  await requireSameRule(wh, group, rule);
  // A provisional month covered in part is compared with the same days of the previous month.
  const compared = closure.status === 'provisional' ? comparedDays(month, closure.watermark) : undefined;
  const sameDays = compared?.previousThrough;
  const [totals, recognised, other, statuses, brands, daily, adjustments, platform, credit, creditAdjustments] = [
    await currencyTotals(wh, month, group.groupId, undefined, sameDays),
    await currencyTotals(wh, month, group.groupId, true, sameDays),
    await currencyTotals(wh, month, group.groupId, false, sameDays),
    await statusLines(wh, month, group.groupId),
    await topBrands(wh, month, group.groupId),
    await dailyLines(wh, month, group.groupId),
    await adjustmentsBooked(wh, month, group.groupId),
    await platformCheck(wh, month, group.groupId),
    await creditLiability(wh, month, group.groupId),
    await creditAdjustmentsBooked(wh, month, group.groupId),
  ];
  const zero = Object.fromEntries(MEASURES.map((m) => [m, m === 'orders' ? '0' : '0.00'])) as Measures;
  const noPct = Object.fromEntries(MEASURES.map((m) => [m, null])) as CurrencySection['changePct'];
  const currencies: CurrencySection[] = totals.map((t) => ({
    ...t,
    byStatus: statuses.get(t.currency) ?? [],
    recognised: recognised.find((r) => r.currency === t.currency) ?? {
      current: zero,
      previous: zero,
      change: zero,
      changePct: noPct,
    },
    other: other.find((r) => r.currency === t.currency)?.current ?? zero,
    unknownStatuses: (statuses.get(t.currency) ?? []).map((s) => s.status).filter((s) => !isKnownStatus(s, rule)),
    topBrands: brands.get(t.currency) ?? [],
    daily: daily.get(t.currency) ?? [],
  }));
  return {
    groupId: group.groupId,
    name: group.name,
    timezone: group.timezone,
    closure,
    currencies,
    ...(adjustments ? { adjustments } : {}),
    ...(platform ? { platform } : {}),
    ...(credit ? { credit } : {}),
    ...(creditAdjustments ? { creditAdjustments } : {}),
    ...(compared ? { compared } : {}),
  };
}

/**
 * The report reads recognised revenue from the mart (is_recognised), so the mart must have been built under the
 * rule the report states: otherwise it refuses, one line, rather than print one rule over figures of another.
 */
async function requireSameRule(wh: Warehouse, group: GroupInfo, rule: RevenueRule): Promise<void> {
  const differ = await ruleDisagreements(wh, group.groupId, rule.statuses);
  if (differ === null)
    throw new ReportInputError(
      `revenue_monthly in ${wh.path} has no is_recognised column (built by an earlier version): rebuild it with \`perks build\``,
    );
  if (differ.length > 0)
    throw new ReportInputError(
      `revenue_monthly was built under another PERKS_REVENUE_STATUSES than` +
        ` ${JSON.stringify(rule.statuses.join(','))} (it counts ${differ.map((s) => JSON.stringify(s)).join(', ')} otherwise):` +
        ` rebuild with \`perks build\` under the same setting, or report under the build's`,
    );
}

/** A group's months and their states (the marts' month_state: signed off first), for the trend. */
async function monthStatesByMonth(
  outDir: string,
  groupId: number,
  inForce: ReadonlyMap<string, CloseRecord>,
): Promise<Map<string, MonthState>> {
  const signed = [...inForce.values()].filter((r) => r.organisation_group_id === groupId).map((r) => r.month);
  return new Map(monthStatesOf(await readOrdersState(outDir, groupId), signed).map((m) => [m.month, m.state]));
}
