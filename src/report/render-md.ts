/**
 * The Markdown for a CI summary: the status line, one table per group and currency, the reconciliation
 * line. Short on purpose; the HTML has the detail.
 */
import { currencyLabel, formatChange, formatMeasure, formatMoney, formatPct, groupDigits } from './format.js';
import { MEASURE_LABELS, type RevenueReport } from './model.js';
import { MEASURES } from '../closes/index.js';
import { ruleSentence } from './revenue-rule.js';
import {
  closureReasons,
  comparedWith,
  consolidatedSentence,
  creditBasisSentence,
  reconciliationSentence,
  statusHeadline,
  platformSentences,
  unknownStatusSentences,
} from './sentences.js';

export function renderMarkdown(report: RevenueReport): string {
  const { month } = report;
  const headline = statusHeadline(report);
  const colon = headline.indexOf(':');
  const out = [
    `## Revenue report: ${month.label}${report.groupFilter === undefined ? '' : ` (group ${report.groupFilter})`}`,
    '',
    `**${headline.slice(0, colon)}**${headline.slice(colon)}`,
    '',
    ...(report.status === 'provisional' || report.groups.some((g) => g.signoff)
      ? [...closureReasons(report).map((r) => `- ${r}`), '']
      : []),
    `### Recognised revenue`,
    '',
    ruleSentence(report.revenueRule),
    '',
    ...unknownStatusSentences(report).flatMap((u) => [`- **${u}**`]),
    `| Group | Currency | Recognised orders | Recognised group revenue | Change vs ${comparedWith(report)} | Other statuses: orders | Other statuses: group revenue |`,
    `|---|---|--:|--:|--:|--:|--:|`,
    ...report.groups.flatMap((g) =>
      g.currencies.map((c) => {
        const change = `${formatChange('group_revenue', c.recognised.change.group_revenue, c.currency)} (${formatPct(c.recognised.changePct.group_revenue, c.recognised.current.group_revenue)})`;
        return `| ${cell(g.name)} (${g.groupId}) | ${cell(currencyLabel(c.currency))} | ${formatMeasure('orders', c.recognised.current.orders, c.currency)} | ${formatMeasure('group_revenue', c.recognised.current.group_revenue, c.currency)} | ${change} | ${formatMeasure('orders', c.other.orders, c.currency)} | ${formatMeasure('group_revenue', c.other.group_revenue, c.currency)} |`;
      }),
    ),
    '',
    ...(report.consolidated
      ? [
          `### Consolidated in ${report.consolidated.currency}`,
          '',
          consolidatedSentence(report)!,
          '',
          `| Group | Recognised revenue | Group revenue, all statuses | Not converted (no rate) |`,
          `|---|--:|--:|---|`,
          ...report.consolidated.groups.map(
            (g) =>
              `| ${cell(g.name)} (${g.groupId}) | ${formatMoney(g.recognised, report.consolidated!.currency)} | ${formatMoney(g.groupRevenue, report.consolidated!.currency)} | ${g.missing.join(', ') || '–'} |`,
          ),
          `| Total | ${formatMoney(report.consolidated.total.recognised, report.consolidated.currency)} | ${formatMoney(report.consolidated.total.groupRevenue, report.consolidated.currency)} | ${report.consolidated.missing.join(', ') || '–'} |`,
          '',
        ]
      : []),
    `### All statuses`,
    '',
    `| Group | Currency | ${MEASURES.map((m) => MEASURE_LABELS[m]).join(' | ')} | Revenue vs ${comparedWith(report)} |`,
    `|---|---|${MEASURES.map(() => '--:').join('|')}|--:|`,
  ];
  for (const g of report.groups) {
    const name = `${cell(g.name)} (${g.groupId})`;
    if (g.currencies.length === 0) out.push(`| ${name} | – | ${MEASURES.map(() => '0').join(' | ')} | – |`);
    for (const c of g.currencies) {
      const values = MEASURES.map((m) => formatMeasure(m, c.current[m], c.currency));
      const change = `${formatChange('group_revenue', c.change.group_revenue, c.currency)} (${formatPct(c.changePct.group_revenue, c.current.group_revenue)})`;
      out.push(`| ${name} | ${cell(currencyLabel(c.currency))} | ${values.join(' | ')} | ${change} |`);
    }
  }
  const adjustments = report.groups.flatMap((g) => (g.adjustments?.totals ?? []).map((t) => ({ g, t })));
  if (adjustments.length > 0) {
    out.push(
      '',
      `### Adjustments to closed months booked in ${month.label}`,
      '',
      'Changes first observed this month to orders of months already signed off; the closed figures stay as signed.',
      '',
    );
    out.push(
      '| Group | Closed month | Currency | Changes | Late orders | Removed orders | Group revenue change | Recognised revenue change |',
      '|---|---|---|--:|--:|--:|--:|--:|',
    );
    for (const { g, t } of adjustments) {
      out.push(
        `| ${cell(g.name)} (${g.groupId}) | ${t.month} | ${cell(currencyLabel(t.currency))} | ${t.changes} | ${t.orders} | ${t.removed} | ${formatChange('group_revenue', t.group_revenue, t.currency)} | ${formatChange('group_revenue', t.recognised_revenue, t.currency)} |`,
      );
    }
  }
  const credit = report.groups.filter((g) => g.credit);
  if (credit.length > 0) {
    out.push(
      '',
      `### Credit liability at ${credit[0].credit!.monthEnd}`,
      '',
      'Platform credit users can still spend (a liability), in credit units: the API names no currency for credit.',
      '',
    );
    out.push(
      '| Group | Users | Available (liability) | Granted | Spent | Expired | Oldest extraction |',
      '|---|--:|--:|--:|--:|--:|---|',
    );
    for (const g of credit) {
      const c = g.credit!;
      out.push(
        `| ${cell(g.name)} (${g.groupId}) | ${groupDigits(c.users)} | ${groupDigits(c.available, 2)} | ${groupDigits(c.granted, 2)} | ${groupDigits(c.spent, 2)} | ${groupDigits(c.expired, 2)} | ${c.oldestSnapshot} |`,
      );
    }
    out.push('', creditBasisSentence(report)!);
  }
  const creditAdjustments = report.groups.flatMap((g) => (g.creditAdjustments ?? []).map((a) => ({ g, a })));
  if (creditAdjustments.length > 0) {
    out.push(
      '',
      `### Adjustments to closed months' credit liability booked in ${month.label}`,
      '',
      'Changes first observed this month to the credit liability of months already signed off (now − as closed, credit units); the closed figures stay as signed.',
      '',
    );
    out.push(
      '| Group | Closed month | Users | Available (liability) | Granted | Spent | Expired | Observed |',
      '|---|---|--:|--:|--:|--:|--:|---|',
    );
    for (const { g, a } of creditAdjustments) {
      out.push(
        `| ${cell(g.name)} (${g.groupId}) | ${a.month} | ${a.users} | ${groupDigits(a.available, 2)} | ${groupDigits(a.granted, 2)} | ${groupDigits(a.spent, 2)} | ${groupDigits(a.expired, 2)} | ${a.observedAt} |`,
      );
    }
  }
  out.push('', `**Reconciliation**: ${reconciliationSentence(report)}`, '');
  const platform = platformSentences(report);
  if (platform.length > 0)
    out.push(
      '**Platform statistics** (the redemption statistics the platform computes, per user, against our orders):',
      '',
      ...platform.map((p) => `- ${p}`),
      '',
    );
  return out.join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}
