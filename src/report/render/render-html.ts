/**
 * The HTML report: one self-contained file (inline CSS and SVG, no script, no network) that a person
 * opens, reads and prints. Tables carry real headers and captions; charts carry <title> and <desc>.
 */
import { currencyLabel, esc, formatChange, formatCount, formatMeasure, formatMoney, formatPct } from './format.js';
import { HTML_STYLE } from './html-style.js';
import { labelTableCells } from './html-reflow.js';
import { MEASURE_LABELS, type RevenueReport } from '../model.js';
import { MEASURES, type CurrencySection, type GroupSection } from '../../closes/index.js';
import { closureReasons, comparedWith, statusHeadline } from './sentences.js';
import { chartSummary, revenueChart } from './svg-chart.js';
import {
  consolidatedBlock,
  groupName,
  onScreenOrPaper,
  recognisedBlock,
  trend,
  trendBlock,
} from './render-html-finance.js';
import { dayRange } from '../month.js';
import { creditBlock, platformBlock, reconciliationBlock } from './render-html-checks.js';

export function renderHtml(report: RevenueReport): string {
  return labelTableCells(page(report));
}

function page(report: RevenueReport): string {
  const title = `Revenue report: ${report.month.label}${report.groupFilter === undefined ? '' : ` (group ${report.groupFilter})`}`;
  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${HTML_STYLE}</style>
</head>
<body>
<main>
<header class="masthead">
  <p class="eyebrow">Finance · monthly revenue</p>
  <h1>${esc(title)}</h1>
  <p class="meta">Generated ${esc(report.generatedAt)} from ${esc(report.warehouse)} in the output directory. ` +
    `Months are the groups' own local days; currencies are never added together.</p>
</header>
${statusBlock(report)}
${toc(report)}
${recognisedBlock(report)}
${consolidatedBlock(report)}
${trendBlock(report)}
${summary(report)}
${adjustmentsBlock(report)}
${report.groups.map((g) => groupBlock(report, g)).join('\n')}
${creditBlock(report)}
${reconciliationBlock(report)}
${platformBlock(report)}
<footer>Amounts are exact decimals summed by DuckDB from the revenue_monthly mart (group revenue per day and brands from the staged orders).
Change compares with ${esc(comparedWith(report))}; "new" means ${esc(comparedWith(report))} had nothing to compare with.</footer>
</main>
</body>
</html>
`
  );
}

/** The table of contents: the sections this report has, in their order. */
function toc(report: RevenueReport): string {
  const groups = report.groups;
  const when = (has: boolean, id: string, label: string): [string, string][] => (has ? [[id, label]] : []);
  const links: [string, string][] = [
    ['recognised', 'Recognised revenue'],
    ...when(report.consolidated !== undefined, 'consolidated', 'Consolidated'),
    ['trend', 'Trend and year to date'],
    ['summary', 'Summary'],
    ...when(
      groups.some((g) => (g.adjustments?.totals.length ?? 0) > 0),
      'adjustments',
      'Adjustments',
    ),
    ...groups.map((g): [string, string] => [`group-${g.groupId}`, esc(g.name)]),
    ['credit', 'Credit liability'],
    ...when(
      groups.some((g) => (g.creditAdjustments?.length ?? 0) > 0),
      'credit-adjustments',
      'Credit adjustments',
    ),
    ['reconciliation', 'Reconciliation'],
    ...when(
      groups.some((g) => g.platform),
      'platform',
      'Platform statistics',
    ),
  ];
  return `<nav class="toc" aria-label="Contents">${links.map(([id, label]) => `<a href="#${id}">${label}</a>`).join('')}</nav>`;
}

function statusBlock(report: RevenueReport): string {
  const [word, rest] = splitHeadline(statusHeadline(report));
  return `<section class="status status-${report.status}" role="status" aria-label="Month status">
  <p><strong>${esc(word)}</strong> ${esc(rest)}</p>
  <ul>${closureReasons(report)
    .map((r) => `<li>${esc(r)}</li>`)
    .join('')}</ul>
</section>`;
}

function summary(report: RevenueReport): string {
  const rows = report.groups.flatMap((g) =>
    g.currencies.length === 0
      ? [
          `<tr><th scope="row">${groupName(report, g)}</th>` +
            `<td colspan="${MEASURES.length + 2}" class="empty">No orders in ${esc(report.month.label)} or ${esc(report.month.previousLabel)}.</td></tr>`,
        ]
      : g.currencies.map(
          (c) =>
            `<tr><th scope="row">${groupName(report, g)}</th><td>${esc(currencyLabel(c.currency))}</td>` +
            MEASURES.map((m) => `<td class="num">${esc(formatMeasure(m, c.current[m], c.currency))}</td>`).join('') +
            `<td class="num ${trend(c.change.group_revenue)}">` +
            `${esc(formatChange('group_revenue', c.change.group_revenue, c.currency))} (` +
            `${esc(formatPct(c.changePct.group_revenue, c.current.group_revenue))})</td></tr>`,
        ),
  );
  return (
    `<section id="summary" aria-labelledby="summary-h">
<h2 id="summary-h">Summary <span class="sub">${esc(report.month.label)}, all order statuses</span></h2>
<div class="wide"><table class="summary">
<caption>Totals per group and currency; change in group revenue against ${esc(comparedWith(report))}</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Currency</th>` +
    `${MEASURES.map((m) => `<th scope="col" class="num">${MEASURE_LABELS[m]}</th>`).join('')}<th scope="col" class="num">Revenue change</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>
</section>`
  );
}

/** Adjustments to closed months booked in this month: totals per group, closed month and currency, then the changes. */
function adjustmentsBlock(report: RevenueReport): string {
  const withAdjustments = report.groups.filter((g) => (g.adjustments?.totals.length ?? 0) > 0);
  if (withAdjustments.length === 0) return '';
  const totals = withAdjustments.flatMap((g) =>
    g.adjustments!.totals.map(
      (t) =>
        `<tr><th scope="row">${esc(g.name)}</th><td>${esc(t.month)}</td><td>${esc(currencyLabel(t.currency))}</td>` +
        `<td class="num">${esc(formatCount(t.changes))}</td><td class="num">${esc(formatCount(t.orders))}</td>` +
        `<td class="num">${esc(formatCount(t.removed))}</td>` +
        `<td class="num ${trend(t.group_revenue)}">` +
        `${esc(formatChange('group_revenue', t.group_revenue, t.currency))}</td>` +
        `<td class="num ${trend(t.recognised_revenue)}">${esc(formatChange('group_revenue', t.recognised_revenue, t.currency))}</td></tr>`,
    ),
  );
  const lines = withAdjustments.flatMap((g) =>
    g.adjustments!.lines.map(
      (l) =>
        `<tr><td>${esc(g.name)}</td><td>${esc(l.month)}</td><th scope="row">${esc(l.orderId)}</th><td>` +
        `${esc(l.kind)}</td><td>${esc(l.beforeStatus ?? '(none)')} → ${esc(l.afterStatus || '(none)')}</td>` +
        `<td class="num">${l.beforeRevenue === null ? '–' : esc(formatMoney(l.beforeRevenue, l.currency))}</td>` +
        `<td class="num">${esc(formatMoney(l.afterRevenue, l.currency))}</td><td>${esc(l.observedAt)}</td></tr>`,
    ),
  );
  const more = withAdjustments.reduce((n, g) => n + g.adjustments!.more, 0);
  return (
    `<section id="adjustments" aria-labelledby="adjustments-h">
<h2 id="adjustments-h">Adjustments to closed months <span class="sub">booked in ${esc(report.month.label)}</span></h2>
<p>Changes first observed in ${esc(report.month.label)} to orders of months already signed off. ` +
    `The closed months' figures stay as signed; these are booked here.</p>
<div class="wide"><table class="adjustments">
<caption>Per closed month and currency</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Closed month</th><th scope="col">Currency</th>` +
    `<th scope="col" class="num">Changes</th><th scope="col" class="num">Late orders</th>` +
    `<th scope="col" class="num">Removed orders</th><th scope="col" class="num">Group revenue change</th>` +
    `<th scope="col" class="num">Recognised revenue change</th></tr></thead>
<tbody>${totals.join('\n')}</tbody>
</table></div>
<div class="wide"><table class="adjustment-lines">
<caption>The changes${more > 0 ? `, the first ${lines.length} (${more} more in the revenue_adjustments mart)` : ''}</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Closed month</th><th scope="col">Order</th>` +
    `<th scope="col">Kind</th><th scope="col">Status</th><th scope="col" class="num">Revenue before</th>` +
    `<th scope="col" class="num">Revenue after</th><th scope="col">Observed at</th></tr></thead>
<tbody>${lines.join('\n')}</tbody>
</table></div>
</section>`
  );
}

function groupBlock(report: RevenueReport, g: GroupSection): string {
  const sub = [`group ${g.groupId}`, g.timezone, g.signoff ? 'signed off' : g.closure.state]
    .filter(Boolean)
    .join(' · ');
  const body =
    g.currencies.length === 0
      ? `<p class="empty">No orders in ${esc(report.month.label)} or ${esc(report.month.previousLabel)}.</p>`
      : g.currencies.map((c) => currencyBlock(report, g, c)).join('\n');
  return (
    `<section class="group" id="group-${g.groupId}" aria-labelledby="group-${g.groupId}-h">
<h2 id="group-${g.groupId}-h">${groupName(report, g)} <span class="sub">` +
    `${esc(sub)}</span> <span class="badge ${g.signoff ? 'signed_off' : g.closure.state}">${g.signoff ? 'signed off' : g.closure.state}</span></h2>
${body}
</section>`
  );
}

function currencyBlock(report: RevenueReport, g: GroupSection, c: CurrencySection): string {
  const cur = currencyLabel(c.currency);
  const id = `chart-${g.groupId}-${c.currency.replace(/[^A-Za-z0-9]/g, '') || 'none'}`;
  const measures = MEASURES.map(
    (m) =>
      `<tr><th scope="row">${MEASURE_LABELS[m]}</th><td class="num">${esc(formatMeasure(m, c.current[m], c.currency))}</td>` +
      `<td class="num">${esc(formatMeasure(m, c.previous[m], c.currency))}</td>` +
      `<td class="num ${trend(c.change[m])}">${esc(formatChange(m, c.change[m], c.currency))}</td>` +
      `<td class="num ${trend(c.change[m])}">${esc(formatPct(c.changePct[m], c.current[m]))}</td></tr>`,
  ).join('');
  const statusCells = (values: (typeof c.byStatus)[number]['values']) =>
    MEASURES.map((m) => `<td class="num">${esc(formatMeasure(m, values[m], c.currency))}</td>`).join('');
  const statusRows = c.byStatus
    .map((s) => `<tr><th scope="row">${esc(s.status || '(none)')}</th>${statusCells(s.values)}</tr>`)
    .join('');
  const statuses =
    c.byStatus.length === 0
      ? `<p class="empty">No orders in ${esc(report.month.label)}.</p>`
      : `<div class="wide"><table>
<caption>${esc(report.month.label)} by order status, ${esc(cur)}</caption>
<thead><tr><th scope="col">Status</th>${MEASURES.map((m) => `<th scope="col" class="num">${MEASURE_LABELS[m]}</th>`).join('')}</tr></thead>
<tbody>${statusRows}
<tr class="total"><th scope="row">Total</th>${MEASURES.map((m) => `<td class="num">${esc(formatMeasure(m, c.current[m], c.currency))}</td>`).join('')}</tr>` +
        `</tbody>
</table></div>`;
  const chart =
    c.daily.length === 0
      ? `<p class="empty">No orders in ${esc(report.month.label)}, so no daily chart.</p>`
      : dailyChart(id, `Group revenue per day, ${g.name}, ${cur}, ${report.month.label}`, cur, c);
  const brandRows = c.topBrands
    .map(
      (b) =>
        `<tr><th scope="row">${esc(b.brand)}</th><td class="num">${esc(formatCount(b.orders))}</td>` +
        `<td class="num">${esc(formatMoney(b.group_revenue, c.currency))}</td>` +
        `<td class="num">${b.share === null ? '–' : `${esc(b.share)}%`}</td></tr>`,
    )
    .join('');
  const brands =
    c.topBrands.length === 0
      ? ''
      : `<div class="wide"><table>
<caption>Top brands by group revenue, ${esc(cur)}</caption>
<thead><tr><th scope="col">Brand</th><th scope="col" class="num">Orders</th>` +
        `<th scope="col" class="num">Group revenue</th><th scope="col" class="num">Share</th></tr></thead>
<tbody>${brandRows}</tbody>
</table></div>`;
  return (
    `<article class="currency" aria-label="${esc(`${g.name}, ${cur}`)}">
<h3>${esc(cur)} <span class="sub">${esc(g.compared ? dayRange(g.compared.through) : report.month.label)} against ${esc(comparedWith(report, g))}</span></h3>
<div class="wide"><table class="measures">
<caption>Totals, all order statuses, ${esc(cur)}</caption>
<thead><tr><th scope="col">Measure</th><th scope="col" class="num">` +
    `${esc(g.compared ? dayRange(g.compared.through) : report.month.label)}</th><th scope="col" class="num">` +
    `${esc(comparedWith(report, g))}</th><th scope="col" class="num">Change</th><th scope="col" class="num">Change %</th></tr></thead>
<tbody>${measures}</tbody>
</table></div>
<h4>By order status</h4>
${statuses}
<div class="split"><div><h4>Group revenue per day</h4>${chart}</div><div><h4>Top brands</h4>` +
    `${brands || '<p class="empty">No brands this month.</p>'}</div></div>
</article>`
  );
}

function splitHeadline(text: string): [string, string] {
  const i = text.indexOf(':');
  return [text.slice(0, i + 1), text.slice(i + 1).trim()];
}

/** A currency's revenue per day: on screen a bar shows its amount when pointed at; on paper the caption sums it up. */
function dailyChart(id: string, title: string, cur: string, c: CurrencySection): string {
  const input = { id, title, currency: c.currency, days: c.daily, total: c.current.group_revenue };
  return (
    `<figure>
${revenueChart(input)}
<figcaption>Group revenue per day, ${esc(cur)}, on the group's local days. ` +
    `${onScreenOrPaper('Point at a bar for its day’s amount and orders.', chartSummary(input))}</figcaption>
</figure>`
  );
}
