/** The plain sentences every format opens and closes with, written once so the formats never disagree. */
import { currencyLabel, groupDigits } from './format.js';
import { MEASURE_LABELS, type RevenueReport } from '../model.js';
import type { GroupSection, Signoff } from '../../closes/index.js';
import { dayRange } from '../month.js';

/**
 * "SIGNED OFF", "FINAL", "PARTIAL" or "PROVISIONAL" (the marts' month_state, src/closes/month-state.ts), then
 * why, in one line. Final (past the lookback) is not signed off (`perks close`): the words never mix them.
 */
export function statusHeadline(report: RevenueReport): string {
  const { month } = report;
  const scope = report.groupFilter === undefined ? 'every group' : `group ${report.groupFilter}`;
  if (report.status === 'signed_off') {
    return (
      `SIGNED OFF: ${month.label} is signed off for ${scope}. ` +
      `These are the figures as signed off (the close record below); later changes to its orders are booked as adjustments in the month they are observed.`
    );
  }
  if (report.status === 'final') {
    const unsigned = report.groups.filter((g) => !g.signoff).map((g) => g.groupId);
    return (
      `FINAL: ${month.label} is final for ${scope}. The extract has passed the month's end plus its lookback, ` +
      `so these figures will not change; not signed off for group ${unsigned.join(', ')} (\`perks close --month ${month.ym}\` signs it off).`
    );
  }
  const open = (state: string) =>
    report.groups.filter((g) => !g.signoff && g.closure.state === state).map((g) => g.groupId);
  if (report.status === 'partial') {
    return (
      `PARTIAL: ${month.label} is incomplete for group ${open('partial').join(', ')}: ` +
      `the extract starts after the month's first day, so some of its orders were never read; backfill it before reading these figures as the month's.`
    );
  }
  return (
    `PROVISIONAL: ${month.label} is not final yet for group ${open('provisional').join(', ')}. ` +
    `Orders may still change until the extract has passed the month's end plus its lookback; do not sign these figures off.`
  );
}

/** One reason per group, e.g. "group 12 is extracted to 2024-04-06; the month is final once …". */
export function closureReasons(report: RevenueReport): string[] {
  return report.groups.map((g) => {
    const s = g.signoff;
    if (!s)
      return `${g.name} (${g.closure.state}): ${g.closure.reason}.${g.compared ? ` ${sameDaysSentence(report, g)}` : ''}`;
    return `${g.name} (signed off): closed by ${s.by} at ${s.at}${forcedText(s)}${s.note ? ` ("${s.note}")` : ''}; close record ${s.seq}, sha256 ${s.hash}.`;
  });
}

/** One line per closed month and currency adjusted in this month, e.g. "Acme UK (11): October 2026 GBP, 3 changes …". */
export function adjustmentSentences(report: RevenueReport): string[] {
  return report.groups.flatMap((g) =>
    (g.adjustments?.totals ?? []).map(
      (t) =>
        `${g.name} (${g.groupId}), ${t.month}, ${currencyLabel(t.currency)}: ` +
        `${t.changes} change${t.changes === '1' ? '' : 's'} (${t.orders} late` +
        ` order${t.orders === '1' ? '' : 's'}${t.removed === '0' ? '' : `, ${t.removed} no longer listed`}), ` +
        `group revenue ${signed(t.group_revenue)}, recognised revenue ${signed(t.recognised_revenue)}.`,
    ),
  );
}

function signed(decimal: string): string {
  return decimal.startsWith('-') || !/[1-9]/.test(decimal) ? decimal : `+${decimal}`;
}

/** "Reconciled: …" or "NOT RECONCILED: n differences …" or why it could not be done. */
export function reconciliationSentence(report: RevenueReport): string {
  const rec = report.reconciliation;
  if (!rec.available) return `NOT RECONCILED: ${rec.note}.`;
  const pairs = new Set(rec.lines.map((l) => `${l.groupId}/${l.currency}`)).size;
  if (rec.reconciled) {
    return (
      `Reconciled: the mart equals the lake's raw orders for ${report.month.label} in every column` +
      ` (${pairs} group/currency pair${pairs === 1 ? '' : 's'}).`
    );
  }
  const where = rec.differences
    .slice(0, 3)
    .map(
      (d) =>
        `group ${d.groupId} ${currencyLabel(d.currency)} ${MEASURE_LABELS[d.column].toLowerCase()} (mart ${d.mart ?? 'none'}, lake ${d.lake ?? 'none'})`,
    )
    .join('; ');
  const more = rec.differences.length > 3 ? `; and ${rec.differences.length - 3} more` : '';
  return `NOT RECONCILED: ${rec.differences.length} difference${rec.differences.length === 1 ? '' : 's'} between the mart and the lake: ${where}${more}.`;
}

/** Statuses the API sent this month that the project does not know and the rule does not name: never counted. */
export function unknownStatusSentences(report: RevenueReport): string[] {
  return report.groups.flatMap((g) =>
    g.currencies
      .filter((c) => c.unknownStatuses.length > 0)
      .map(
        (c) =>
          `${g.name} (${g.groupId}), ${currencyLabel(c.currency)}: ` +
          `unknown order status ${c.unknownStatuses.map((s) => JSON.stringify(s || '(none)')).join(', ')} is not counted as` +
          ` recognised revenue; add it to PERKS_REVENUE_STATUSES if it is revenue.`,
      ),
  );
}

/** Per group: "Platform statistics: …" saying plainly whether the platform's own figures and ours agree. */
export function platformSentences(report: RevenueReport): string[] {
  return report.groups.flatMap((g) => {
    const p = g.platform;
    if (!p) return [];
    const who = `${g.name} (${g.groupId})`;
    if (!p.available)
      return [
        `${who}: no platform statistics for ${report.month.label} in the warehouse (extract redemption_stats), ` +
          `so our orders were not compared with the platform's own figures.`,
      ];
    const explained = p.explained.reduce((n, e) => n + e.rows, 0);
    const head = `${p.matched} user${p.matched === 1 ? '' : 's'} matched, ${explained} explained`;
    if (p.differs === 0) return [`${who}: the platform's statistics AGREE with our orders: ${head}, 0 differ.`];
    const users = p.differences
      .slice(0, 5)
      .map((d) => `user ${d.userId} (${differenceText(d)})`)
      .join('; ');
    const more = p.differs > 5 ? `; and ${p.differs - 5} more` : '';
    return [
      `${who}: the platform's statistics DISAGREE with our orders for ${p.differs} user${p.differs === 1 ? '' : 's'} (${head}): ${users}${more}.`,
    ];
  });
}

type PlatformDifference = NonNullable<RevenueReport['groups'][number]['platform']>['differences'][number];

/**
 * What differs for one user, by the statuses the statistics tell apart: "Complete orders: platform 2, ours 1; face
 * value platform − ours 15.00" when a Complete figure differs, "orders not Complete: platform 1, ours 0" when the
 * other statuses' count does (ours named by status: the statistics give none), both when both do.
 */
function differenceText(d: PlatformDifference): string {
  const zero = (v: string) => /^-?0*(\.0*)?$/.test(v);
  const complete = `Complete orders: platform ${d.platformEgiftOrders ?? 'none'}, ours ${d.lakeCompleteOrders}; face value platform − ours ${d.faceValue}`;
  const platformOther =
    d.platformOrders === null ? null : Number(d.platformOrders) - Number(d.platformEgiftOrders ?? 0);
  const oursOther = Number(d.lakeOrders) - Number(d.lakeCompleteOrders);
  const completeDiffers =
    (d.platformEgiftOrders ?? '0') !== d.lakeCompleteOrders || ![d.faceValue, d.cost, d.savings].every(zero);
  const otherDiffers = (platformOther ?? 0) !== oursOther;
  const named = d.otherStatuses ? ` (${d.otherStatuses})` : '';
  const other = `orders not Complete: platform ${platformOther ?? 'none'}, ours ${oursOther}${named}`;
  if (completeDiffers && otherDiffers) return `${complete}; ${other}`;
  return otherDiffers ? other : complete;
}

/** "Consolidated in EUR: recognised revenue 1,234.56 EUR …", naming the currencies left out for want of a rate. */
export function consolidatedSentence(report: RevenueReport): string | undefined {
  const c = report.consolidated;
  if (!c) return undefined;
  const money = (v: string) => `${groupDigits(v, 2)} ${c.currency}`;
  const rates = c.used.length === 0 ? '' : ` at ${c.used.join(', ')} (${c.file})`;
  const left =
    c.missing.length === 0
      ? ''
      : ` NOT INCLUDED: ${c.missing.join(', ')}, which ha${c.missing.length === 1 ? 's' : 've'} no rate for` +
        ` ${report.month.ym} in ${c.file} (never converted at 1); the total is incomplete.`;
  return (
    `Consolidated in ${c.currency}: recognised revenue ${money(c.total.recognised)}, ` +
    `group revenue of all statuses ${money(c.total.groupRevenue)}${rates}.${left}`
  );
}

/** How a signed-off section says it was forced (a provisional month keeps the words it always had). */
function forcedText(s: Signoff): string {
  if (!s.forced) return '';
  const why = s.forcedBecause ?? PROVISIONAL;
  return why === PROVISIONAL ? ' with --force while the month was provisional' : ` with --force (${why})`;
}
const PROVISIONAL = 'the month was provisional';

/**
 * What the change compares with: the previous month, or, where a provisional month is covered in part, the same days
 * of it ("1–3 November 2026"); groups covered to different days: "the same days of November 2026".
 */
export function comparedWith(report: RevenueReport, group?: GroupSection): string {
  const groups = group ? [group] : report.groups;
  const partial = new Set(groups.map((g) => g.compared?.previousThrough ?? ''));
  if (partial.size === 1 && partial.has('')) return report.month.previousLabel;
  if (partial.size === 1) return dayRange([...partial][0]);
  return `the same days of ${report.month.previousLabel}`;
}

/** "The change compares 1–3 December 2026 with 1–3 November 2026 (the same days), not with the whole of November 2026." */
export function sameDaysSentence(report: RevenueReport, g: GroupSection): string {
  if (!g.compared) return '';
  return (
    `The change compares ${dayRange(g.compared.through)} with ${dayRange(g.compared.previousThrough)} (the same` +
    ` days), not with the whole of ${report.month.previousLabel}.`
  );
}

/**
 * What the credit liability rests on (issue 25): the oldest balance read, and how many balances were read before
 * the month's last day (stale). Figures frozen before the count existed say only the oldest read.
 */
export function creditBasisSentence(report: RevenueReport): string | undefined {
  const credit = report.groups.flatMap((g) => (g.credit ? [g.credit] : []));
  if (credit.length === 0) return undefined;
  const oldest = credit.map((c) => c.oldestSnapshot).sort()[0];
  const monthEnd = credit[0].monthEnd;
  const known = credit.every((c) => c.staleBalances !== undefined);
  const stale = credit.reduce((n, c) => n + Number(c.staleBalances ?? 0), 0);
  const basis = !known
    ? ''
    : stale > 0
      ? `; ${stale} balance${stale === 1 ? ' was' : 's were'} read before ${monthEnd} and may be stale (a close refreshes them first)`
      : `; every balance held was read on ${monthEnd} or later (later reads rolled back to the month end by their items)`;
  return `The oldest balance this liability rests on was read on ${oldest}${basis}.`;
}

/** Which test groups (is_sandbox) the totals leave out, or count with --include-test-groups; undefined when none. */
export function testGroupsSentence(report: RevenueReport): string | undefined {
  const t = report.testGroups;
  if (t.groups.length === 0) return undefined;
  const names = t.groups.map((g) => `${g.name} (group ${g.groupId})`).join(', ');
  const one = t.groups.length === 1;
  return t.included
    ? `Test group${one ? '' : 's'} counted in the totals (--include-test-groups): ${names}, marked "test" where listed.`
    : `Left out of the totals: ${names}, ${one ? 'a test group' : 'test groups'} (is_sandbox on the platform), ` +
        `listed and marked "test" but counted in no total; \`perks report revenue --include-test-groups\` counts ${one ? 'it' : 'them'}.`;
}
