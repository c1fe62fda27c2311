/**
 * The finance pack's headline sections of the HTML report: recognised revenue with its totals per currency (test
 * groups flagged and left out unless asked), the consolidation into the reporting currency, and the 12-month trend
 * with the year to date.
 */
import { currencyLabel, esc, formatChange, formatCount, formatMoney, formatPct } from './format.js';
import { counted, type RevenueReport, type TrendLine } from '../model.js';
import type { MonthState } from '../../closes/index.js';
import { dayLabel, spanToMonth } from '../month.js';
import { revenueChart } from './svg-chart.js';
import { ruleSentence } from '../revenue-rule.js';
import { comparedWith, consolidatedSentence, testGroupsSentence, unknownStatusSentences } from './sentences.js';

/** The group's name, with a "test" mark for a test group (and whether the totals count it). */
export function groupName(report: RevenueReport, g: { readonly groupId: number; readonly name: string }): string {
  if (!report.testGroups.groups.some((t) => t.groupId === g.groupId)) return esc(g.name);
  const how = counted(report, g.groupId) ? 'test group, counted in the totals' : 'test group, not in the totals';
  return `${esc(g.name)} <span class="badge test" title="${how}">test</span>`;
}

export function testGroupsNote(report: RevenueReport): string {
  const sentence = testGroupsSentence(report);
  return sentence ? `<p class="test-groups">${esc(sentence)}</p>` : '';
}

/** The headline: recognised revenue under the organisation's rule, the other statuses apart, totals per currency. */
export function recognisedBlock(report: RevenueReport): string {
  const rows = report.groups.flatMap((g) =>
    g.currencies.map(
      (c) =>
        `<tr${counted(report, g.groupId) ? '' : ' class="not-counted"'}><th scope="row">${groupName(report, g)}</th>` +
        `<td>${esc(currencyLabel(c.currency))}</td>` +
        `<td class="num">${esc(formatCount(c.recognised.current.orders))}</td>` +
        `<td class="num">${esc(formatMoney(c.recognised.current.group_revenue, c.currency))}</td>` +
        `<td class="num ${trend(c.recognised.change.group_revenue)}">` +
        `${esc(formatChange('group_revenue', c.recognised.change.group_revenue, c.currency))} (` +
        `${esc(formatPct(c.recognised.changePct.group_revenue, c.recognised.current.group_revenue))})</td>` +
        `<td class="num">${esc(formatCount(c.other.orders))}</td><td class="num">${esc(formatMoney(c.other.group_revenue, c.currency))}</td></tr>`,
    ),
  );
  const totals = report.totals.map(
    (t) =>
      `<tr class="total"><th scope="row">Total</th><td>${esc(currencyLabel(t.currency))}</td><td class="num">${esc(formatCount(t.orders))}</td>` +
      `<td class="num">${esc(formatMoney(t.recognised, t.currency))}</td><td class="num">–</td>` +
      `<td class="num">${esc(formatCount(t.otherOrders))}</td><td class="num">${esc(formatMoney(t.other, t.currency))}</td></tr>`,
  );
  const unknown = unknownStatusSentences(report);
  return (
    `<section id="recognised" aria-labelledby="recognised-h">
<h2 id="recognised-h">Recognised revenue <span class="sub">${esc(report.month.label)}, statuses ${esc(report.revenueRule.statuses.join(', '))}</span></h2>
<p class="rule">${esc(ruleSentence(report.revenueRule))}</p>
${testGroupsNote(report)}
${unknown.length === 0 ? '' : `<ul class="unknown-statuses">${unknown.map((u) => `<li><strong>${esc(u)}</strong></li>`).join('')}</ul>`}
<div class="wide"><table class="recognised">
<caption>Recognised group revenue per group and currency, change against ${esc(comparedWith(report))}; other statuses apart; totals per currency</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Currency</th><th scope="col" class="num">Recognised orders</th>` +
    `<th scope="col" class="num">Recognised group revenue</th>` +
    `<th scope="col" class="num">Change vs ${esc(comparedWith(report))}</th>` +
    `<th scope="col" class="num">Other statuses: orders</th><th scope="col" class="num">Other statuses: group revenue</th></tr></thead>
<tbody>${[...rows, ...totals].join('\n')}</tbody>
</table></div>
</section>`
  );
}

/** Converted into the reporting currency; a group none of whose currencies has a rate says so, never "0.00". */
export function consolidatedBlock(report: RevenueReport): string {
  const c = report.consolidated;
  if (!c) return '';
  const amount = (v: string, converted: boolean) =>
    converted ? esc(formatMoney(v, c.currency)) : '<span class="down">rate missing</span>';
  const missingCell = (missing: readonly string[]) =>
    `<td${missing.length ? ' class="down"' : ''}>${esc(missing.length ? `${missing.join(', ')}: rate missing` : '–')}</td>`;
  const rows = c.groups.map(
    (g) =>
      `<tr${counted(report, g.groupId) ? '' : ' class="not-counted"'}><th scope="row">${groupName(report, g)}</th>` +
      `<td class="num">${amount(g.recognised, g.converted)}</td><td class="num">${amount(g.groupRevenue, g.converted)}</td>${missingCell(g.missing)}</tr>`,
  );
  const total =
    `<tr class="total"><th scope="row">Total${c.missing.length ? ' (incomplete)' : ''}</th>` +
    `<td class="num">${amount(c.total.recognised, true)}</td><td class="num">${amount(c.total.groupRevenue, true)}</td>${missingCell(c.missing)}</tr>`;
  return (
    `<section id="consolidated" aria-labelledby="consolidated-h">
<h2 id="consolidated-h">Consolidated in ${esc(c.currency)} <span class="sub">${esc(report.month.label)}</span>` +
    `${c.missing.length ? ' <span class="badge bad">incomplete</span>' : ''}</h2>
<p>${esc(consolidatedSentence(report)!)}</p>
${testGroupsNote(report)}
<div class="wide"><table class="consolidated">
<caption>Converted with the rates of ${esc(report.month.ym)}; a currency without a rate is named and left out, never converted</caption>
<thead><tr><th scope="col">Group</th><th scope="col" class="num">Recognised revenue</th>` +
    `<th scope="col" class="num">Group revenue, all statuses</th><th scope="col">Not converted</th></tr></thead>
<tbody>${rows.join('\n')}
${total}</tbody>
</table></div>
</section>`
  );
}

/** Recognised revenue per month for 12 months and the year to date: one table per currency, months down the side. */
export function trendBlock(report: RevenueReport): string {
  const { trend: t } = report;
  const currencies = [...new Set(t.lines.map((l) => l.currency))].sort();
  const tables = currencies.map((cur) => {
    const lines = t.lines.filter((l) => l.currency === cur);
    const head = lines
      .map(
        (l) =>
          `<th scope="col" class="num">${l.groupId === null ? 'All groups' : groupName(report, { groupId: l.groupId, name: l.name })}</th>`,
      )
      .join('');
    const body = t.months.map((m, i) => {
      // a partial (or provisional) month is said once in the row's header when every figure of the row shares it
      const marked = new Set(lines.flatMap((l) => (l.months[i] === null ? [] : [l.states[i]])));
      const shared = marked.size === 1 ? [...marked][0] : null;
      const rowMark = shared && MARKED.has(shared) ? ` ${stateMark(shared)}` : '';
      const cells = lines.map((l) => trendCell(l.months[i], cur, rowMark ? null : l.states[i])).join('');
      return `<tr${m === report.month.ym ? ' class="current"' : ''}><th scope="row">${esc(m)}${rowMark}</th>${cells}</tr>`;
    });
    const froms = new Set(lines.map((l) => l.ytdFrom));
    const common = froms.size === 1 ? [...froms][0] : undefined;
    // from 1 January the year says it; a later first day is said under it (or under each figure when they differ)
    const jan1 = `${t.year}-01-01`;
    const ytdHead = `Year to date ${esc(t.year)}${common && common !== jan1 ? `<br><span class="from">${esc(spanToMonth(common, report.month))}</span>` : ''}`;
    const ytdCell = (l: TrendLine) =>
      `<td class="num">${esc(formatMoney(l.ytd, cur))}` +
      `${common || l.ytdFrom === jan1 ? '' : `<br><span class="from">from ${esc(dayLabel(l.ytdFrom))}</span>`}</td>`;
    const ytd = `<tr class="total"><th scope="row">${ytdHead}</th>${lines.map(ytdCell).join('')}</tr>`;
    const ytdSpan = common ? spanToMonth(common, report.month) : `from each group's first day to ${report.month.label}`;
    return `<div class="split trend-pair"><div>${trendChart(report, lines, cur)}</div><div class="wide"><table class="trend">
<caption>Recognised group revenue per month, ${esc(currencyLabel(cur))}, ${esc(t.months[0])} to ${esc(report.month.ym)}; year to date: ${esc(ytdSpan)}</caption>
<thead><tr><th scope="col">Month</th>${head}</tr></thead>
<tbody>${[...body, ytd].join('\n')}</tbody>
</table></div></div>`;
  });
  return (
    `<section id="trend" aria-labelledby="trend-h">
<h2 id="trend-h">Trend and year to date <span class="sub">12 months to ${esc(report.month.label)}, recognised revenue</span></h2>
<p>Recognised group revenue per month (a signed-off month as closed), per group and, for all groups the totals count, ` +
    `per currency; the year to date runs from 1 January ${esc(t.year)}, ` +
    `or from the day a group's data starts when that is later, through ${esc(report.month.label)}. "–": ` +
    `before the group's data starts (no figure, not zero); "partial": the data starts after the month's first day, ` +
    `so the figure is not the whole month's; "provisional": the month may still change. Currencies are never added together.</p>
${tables.length === 0 ? '<p class="empty">No recognised revenue in these 12 months.</p>' : tables.join('\n')}
</section>`
  );
}

/** The states a trend figure is marked with: not the whole month's, or not settled yet. */
const MARKED: ReadonlySet<string> = new Set(['partial', 'provisional']);

const stateMark = (state: string) => `<span class="state ${esc(state)}">${esc(state)}</span>`;

/** Bars of the 12 months for all groups counted (else the currency's first group), in the daily chart's style. */
function trendChart(report: RevenueReport, lines: readonly TrendLine[], currency: string): string {
  const line = lines.find((l) => l.groupId === null) ?? lines[0];
  const who = line.groupId === null ? 'all groups' : line.name;
  const notes = line.states.map((s) => (s && MARKED.has(s) ? s : null));
  const chart = revenueChart({
    id: `trend-${currency.replace(/[^A-Za-z0-9]/g, '') || 'none'}`,
    title: `Recognised revenue per month, ${who}, ${currencyLabel(currency)}, ${report.trend.months[0]} to ${report.month.ym}`,
    currency,
    days: report.trend.months.map((m, i) => ({ day: `${m}-01`, orders: '', group_revenue: line.months[i] ?? '0' })),
    total: line.total,
    period: 'month',
    notes,
  });
  const pale = notes.some((n) => n !== null) ? ' A pale bar is a partial or provisional month.' : '';
  return (
    `<figure class="trend-chart">${chart}<figcaption>Recognised revenue per month, ${esc(who)}, ` +
    `${esc(currencyLabel(currency))}.${pale} ${onScreenOrPaper('Point at a bar for its amount.', 'The amounts are in the table beside it.')}</figcaption>` +
    `</figure>`
  );
}

/**
 * A caption's sentence that holds on screen (pointing at a bar shows its amount) and another for paper, where
 * nothing can be pointed at; the stylesheet shows one of them (.on-screen, .on-paper).
 */
export const onScreenOrPaper = (screen: string, paper: string): string =>
  `<span class="on-screen">${esc(screen)}</span><span class="on-paper">${esc(paper)}</span>`;

/** A month's amount, or "–" for a month before the data starts (no figure, which is not zero); its state if marked. */
function trendCell(value: string | null, currency: string, state: MonthState | null): string {
  if (value === null) return '<td class="num empty" title="before the data starts">–</td>';
  const mark = state && MARKED.has(state) ? ` ${stateMark(state)}` : '';
  return `<td class="num">${esc(formatMoney(value, currency))}${mark}</td>`;
}

export function trend(change: string): string {
  if (!/[1-9]/.test(change)) return '';
  return change.trim().startsWith('-') ? 'down' : 'up';
}
