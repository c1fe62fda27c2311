/**
 * The Markdown for a CI summary: the status line, one table per group and currency, the reconciliation
 * line. Short on purpose; the HTML has the detail.
 */
import {
  currencyLabel,
  formatChange,
  formatCount,
  formatMeasure,
  formatMoney,
  formatPct,
  groupDigits,
} from './format.js';
import { MEASURE_LABELS, type RevenueReport } from '../model.js';
import { MEASURES, type CurrencySection } from '../../closes/index.js';
import { ruleSentence } from '../revenue-rule.js';
import { spanToMonth } from '../month.js';
import {
  closureReasons,
  comparedWith,
  consolidatedSentence,
  creditBasisSentence,
  reconciliationSentence,
  statusHeadline,
  platformSentences,
  testGroupsSentence,
  unknownStatusSentences,
} from './sentences.js';

export function renderMarkdown(report: RevenueReport): string {
  return [
    ...statusSection(report),
    ...recognisedSection(report),
    ...consolidatedSection(report),
    ...allStatusesSection(report),
    ...adjustmentsSection(report),
    ...creditSection(report),
    ...creditAdjustmentsSection(report),
    ...closingSection(report),
  ].join('\n');
}

/** The title, the status headline (its first word in bold), and why each group is final or not. */
function statusSection(report: RevenueReport): string[] {
  const headline = statusHeadline(report);
  const colon = headline.indexOf(':');
  const reasons =
    report.status === 'provisional' || report.status === 'partial' || report.groups.some((g) => g.signoff)
      ? [...closureReasons(report).map((r) => `- ${r}`), '']
      : [];
  return [
    `## Revenue report: ${report.month.label}${report.groupFilter === undefined ? '' : ` (group ${report.groupFilter})`}`,
    '',
    `**${headline.slice(0, colon)}**${headline.slice(colon)}`,
    '',
    ...reasons,
  ];
}

/** Recognised revenue and the other statuses beside it, per group and currency. */
function recognisedSection(report: RevenueReport): string[] {
  const rows = report.groups.flatMap((g) =>
    g.currencies.map((c) => {
      const { current } = c.recognised;
      return (
        `| ${groupCell(g)} | ${cell(currencyLabel(c.currency))} |` +
        ` ${formatMeasure('orders', current.orders, c.currency)} |` +
        ` ${formatMeasure('group_revenue', current.group_revenue, c.currency)} | ${revenueChange(c.recognised, c.currency)} |` +
        ` ${formatMeasure('orders', c.other.orders, c.currency)} | ${formatMeasure('group_revenue', c.other.group_revenue, c.currency)} |`
      );
    }),
  );
  return [
    `### Recognised revenue`,
    '',
    ruleSentence(report.revenueRule),
    '',
    ...unknownStatusSentences(report).flatMap((u) => [`- **${u}**`]),
    ...(testGroupsSentence(report) ? [testGroupsSentence(report)!, ''] : []),
    `| Group | Currency | Recognised orders | Recognised group revenue | Change vs ${comparedWith(report)} | Other` +
      ` statuses: orders | Other statuses: group revenue |`,
    `|---|---|--:|--:|--:|--:|--:|`,
    ...rows,
    ...report.totals.map(
      (t) =>
        `| **Total** | ${cell(currencyLabel(t.currency))} | ${formatCount(t.orders)} |` +
        ` ${formatMoney(t.recognised, t.currency)} | – | ${formatCount(t.otherOrders)} | ${formatMoney(t.other, t.currency)} |`,
    ),
    '',
    ...yearToDate(report),
  ];
}

/** The year to date per currency for the groups the totals count (the HTML has the 12-month trend). */
function yearToDate(report: RevenueReport): string[] {
  const all = report.trend.lines.filter((l) => l.groupId === null);
  if (all.length === 0) return [];
  return [
    `Recognised revenue, year to date (${spanToMonth(report.trend.ytdFrom, report.month)}): ${all.map((l) => formatMoney(l.ytd, l.currency)).join(', ')}.`,
    '',
  ];
}

/** With PERKS_FX_RATES: the totals converted into the reporting currency, per group and in all. */
function consolidatedSection(report: RevenueReport): string[] {
  const c = report.consolidated;
  if (!c) return [];
  const money = (amount: string) => formatMoney(amount, c.currency);
  const notConverted = (missing: readonly string[]) => missing.join(', ') || '–';
  return [
    `### Consolidated in ${c.currency}`,
    '',
    consolidatedSentence(report)!,
    '',
    `| Group | Recognised revenue | Group revenue, all statuses | Not converted (no rate) |`,
    `|---|--:|--:|---|`,
    ...c.groups.map(
      (g) =>
        `| ${groupCell(g)} | ${g.converted ? money(g.recognised) : 'rate missing'} |` +
        ` ${g.converted ? money(g.groupRevenue) : 'rate missing'} | ${notConverted(g.missing)} |`,
    ),
    `| Total | ${money(c.total.recognised)} | ${money(c.total.groupRevenue)} | ${notConverted(c.missing)} |`,
    '',
  ];
}

/** Every measure of every status, per group and currency; a group without orders shows zeros. */
function allStatusesSection(report: RevenueReport): string[] {
  const rows = report.groups.flatMap((g) => {
    if (g.currencies.length === 0) return [`| ${groupCell(g)} | – | ${MEASURES.map(() => '0').join(' | ')} | – |`];
    return g.currencies.map((c) => {
      const values = MEASURES.map((m) => formatMeasure(m, c.current[m], c.currency));
      return `| ${groupCell(g)} | ${cell(currencyLabel(c.currency))} | ${values.join(' | ')} | ${revenueChange(c, c.currency)} |`;
    });
  });
  return [
    `### All statuses`,
    '',
    `| Group | Currency | ${MEASURES.map((m) => MEASURE_LABELS[m]).join(' | ')} | Revenue vs ${comparedWith(report)} |`,
    `|---|---|${MEASURES.map(() => '--:').join('|')}|--:|`,
    ...rows,
  ];
}

/** Changes booked this month to months already signed off, per closed month and currency. */
function adjustmentsSection(report: RevenueReport): string[] {
  const rows = report.groups.flatMap((g) =>
    (g.adjustments?.totals ?? []).map(
      (t) =>
        `| ${groupCell(g)} | ${t.month} | ${cell(currencyLabel(t.currency))} | ${t.changes} | ${t.orders} |` +
        ` ${t.removed} | ${formatChange('group_revenue', t.group_revenue, t.currency)} | ${formatChange('group_revenue', t.recognised_revenue, t.currency)} |`,
    ),
  );
  if (rows.length === 0) return [];
  return [
    ...heading(
      `Adjustments to closed months booked in ${report.month.label}`,
      'Changes first observed this month to orders of months already signed off; the closed figures stay as signed.',
    ),
    '| Group | Closed month | Currency | Changes | Late orders | Removed orders | Group revenue change | Recognised revenue change |',
    '|---|---|---|--:|--:|--:|--:|--:|',
    ...rows,
  ];
}

/** Credit is shown in credit units with two decimals: the API names no currency for it. */
function creditSection(report: RevenueReport): string[] {
  const credit = report.groups.filter((g) => g.credit);
  const gaps = report.creditGaps.map((s) => `- ${s}`);
  if (credit.length === 0) return [`### Credit liability`, '', ...gaps, ''];
  const rows = credit.map((g) => {
    const c = g.credit!;
    return (
      `| ${groupCell(g)} | ${groupDigits(c.users)} | ${groupDigits(c.available, 2)} |` +
      ` ${groupDigits(c.granted, 2)} | ${groupDigits(c.spent, 2)} | ${groupDigits(c.expired, 2)} | ${c.oldestSnapshot} |`
    );
  });
  return [
    ...heading(
      `Credit liability at ${credit[0].credit!.monthEnd}`,
      'Platform credit users can still spend (a liability), in credit units: the API names no currency for credit.',
    ),
    '| Group | Users | Available (liability) | Granted | Spent | Expired | Oldest extraction |',
    '|---|--:|--:|--:|--:|--:|---|',
    ...rows,
    '',
    creditBasisSentence(report)!,
    ...(gaps.length === 0 ? [] : ['', ...gaps]),
  ];
}

/** Changes booked this month to the credit liability of months already signed off. */
function creditAdjustmentsSection(report: RevenueReport): string[] {
  const rows = report.groups.flatMap((g) =>
    (g.creditAdjustments ?? []).map(
      (a) =>
        `| ${groupCell(g)} | ${a.month} | ${a.users} | ${groupDigits(a.available, 2)} | ${groupDigits(a.granted, 2)} |` +
        ` ${groupDigits(a.spent, 2)} | ${groupDigits(a.expired, 2)} | ${a.observedAt} |`,
    ),
  );
  if (rows.length === 0) return [];
  return [
    ...heading(
      `Adjustments to closed months' credit liability booked in ${report.month.label}`,
      'Changes first observed this month to the credit liability of months already signed off (now − as closed, ' +
        'credit units); the closed figures stay as signed.',
    ),
    '| Group | Closed month | Users | Available (liability) | Granted | Spent | Expired | Observed |',
    '|---|---|--:|--:|--:|--:|--:|---|',
    ...rows,
  ];
}

/** The reconciliation line, then the platform's statistics when the report has them. */
function closingSection(report: RevenueReport): string[] {
  const platform = platformSentences(report);
  return [
    '',
    `**Reconciliation**: ${reconciliationSentence(report)}`,
    '',
    ...(platform.length === 0
      ? []
      : [
          '**Platform statistics** (the redemption statistics the platform computes, per user, against our orders):',
          '',
          ...platform.map((p) => `- ${p}`),
          '',
        ]),
  ];
}

/** A section that follows a table: a blank line, its title, and one sentence saying what it shows. */
function heading(title: string, intro: string): string[] {
  return ['', `### ${title}`, '', intro, ''];
}

/** "+90.45 GBP (+12.5%)": how group revenue changed against the period compared with, and in percent. */
function revenueChange(figures: Pick<CurrencySection, 'current' | 'change' | 'changePct'>, currency: string): string {
  const { change, changePct, current } = figures;
  return `${formatChange('group_revenue', change.group_revenue, currency)} (${formatPct(changePct.group_revenue, current.group_revenue)})`;
}

/** "Acme UK (11)" */
function groupCell(g: { readonly groupId: number; readonly name: string }): string {
  return `${cell(g.name)} (${g.groupId})`;
}

/** Text fit for a table cell: a pipe would end the cell, a line break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}
