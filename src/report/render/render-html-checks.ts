/**
 * The HTML report's checks: the mart reconciled against the lake, the credit liability (and its changes to
 * signed-off months), the platform's own statistics against ours.
 */
import { currencyLabel, esc, groupDigits, formatCount, formatMeasure } from './format.js';
import { MEASURE_LABELS, type RevenueReport } from '../model.js';
import { MEASURES, type Measure } from '../../closes/index.js';
import { creditBasisSentence, reconciliationSentence, platformSentences } from './sentences.js';
import { groupName } from './render-html-finance.js';

export function reconciliationBlock(report: RevenueReport): string {
  const rec = report.reconciliation;
  const badge = rec.reconciled
    ? '<span class="badge ok">reconciled</span>'
    : '<span class="badge bad">not reconciled</span>';
  const pairs = [
    ...new Map(
      rec.lines.map((l) => [
        `${l.groupId}/${l.currency}`,
        rec.lines.filter((x) => x.groupId === l.groupId && x.currency === l.currency),
      ]),
    ).values(),
  ];
  const overview =
    pairs.length === 0
      ? ''
      : `<div class="wide"><table>
<caption>Mart (revenue_monthly) against the lake's raw orders for ${esc(report.month.label)}, ` +
        `each order once (its latest extract); each cell is mart − lake</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Currency</th>` +
        `${MEASURES.map((m) => `<th scope="col" class="num">${MEASURE_LABELS[m]}</th>`).join('')}<th scope="col">Result</th></tr></thead>
<tbody>${pairs
          .map((lines) => {
            const bad = lines.some((l) => rec.differences.includes(l));
            const cells = lines
              .map(
                (l) =>
                  `<td class="num${rec.differences.includes(l) ? ' down' : ''}">${esc(formatMeasure(l.column, l.difference, l.currency))}</td>`,
              )
              .join('');
            return (
              `<tr><th scope="row">${lines[0].groupId}</th><td>${esc(currencyLabel(lines[0].currency))}</td>${cells}` +
              `<td>${bad ? '<span class="badge bad">differs</span>' : 'equal'}</td></tr>`
            );
          })
          .join('\n')}</tbody>
</table></div>`;
  const show = (column: Measure, v: string | null, currency: string) =>
    v === null ? 'none' : formatMeasure(column, v, currency);
  const differenceRows = rec.differences
    .map(
      (l) =>
        `<tr><td>${l.groupId}</td><td>${esc(currencyLabel(l.currency))}</td><th scope="row">${MEASURE_LABELS[l.column]}</th>` +
        `<td class="num">${esc(show(l.column, l.mart, l.currency))}</td><td class="num">${esc(show(l.column, l.lake, l.currency))}</td>` +
        `<td class="num down">${esc(formatMeasure(l.column, l.difference, l.currency))}</td></tr>`,
    )
    .join('\n');
  const differences =
    rec.differences.length === 0
      ? ''
      : `<div class="wide"><table>
<caption>The differences</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Currency</th><th scope="col">Column</th>` +
        `<th scope="col" class="num">Mart</th><th scope="col" class="num">Lake</th><th scope="col" class="num">Mart − lake</th></tr></thead>
<tbody>${differenceRows}</tbody>
</table></div>`;
  return `<section id="reconciliation" aria-labelledby="reconciliation-h">
<h2 id="reconciliation-h">Reconciliation ${badge}</h2>
<p>${esc(reconciliationSentence(report))}</p>
${overview}
${differences}
</section>`;
}

export function creditBlock(report: RevenueReport): string {
  return creditLiabilityBlock(report) + creditAdjustmentsBlock(report);
}

/** Changes to closed months' credit liability booked in this month. */
function creditAdjustmentsBlock(report: RevenueReport): string {
  const rows = report.groups.flatMap((g) =>
    (g.creditAdjustments ?? []).map(
      (a) =>
        `<tr><th scope="row">${esc(g.name)}</th><td>${esc(a.month)}</td><td class="num">${esc(a.users)}</td>` +
        `<td class="num">${esc(groupDigits(a.available, 2))}</td><td class="num">${esc(groupDigits(a.granted, 2))}</td>` +
        `<td class="num">${esc(groupDigits(a.spent, 2))}</td><td class="num">${esc(groupDigits(a.expired, 2))}</td><td>${esc(a.observedAt)}</td></tr>`,
    ),
  );
  if (rows.length === 0) return '';
  return (
    `
<section id="credit-adjustments" aria-labelledby="credit-adjustments-h">
<h2 id="credit-adjustments-h">Adjustments to closed months' credit liability <span class="sub">booked in ${esc(report.month.label)}</span></h2>
<p>Changes first observed this month to the credit liability of months already signed off (now − as closed, ` +
    `credit units); the closed figures stay as signed.</p>
<div class="wide"><table class="credit-adjustments">
<caption>Credit liability changes, per group and closed month</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Closed month</th><th scope="col" class="num">Users</th>` +
    `<th scope="col" class="num">Available (liability)</th><th scope="col" class="num">Granted</th>` +
    `<th scope="col" class="num">Spent</th><th scope="col" class="num">Expired</th><th scope="col">Observed</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>
</section>`
  );
}

/** Every report has the section: the liability per group, and for each group without one, why and what to do. */
function creditLiabilityBlock(report: RevenueReport): string {
  const groups = report.groups.filter((g) => g.credit);
  const gaps =
    report.creditGaps.length === 0
      ? ''
      : `<ul class="credit-gaps">${report.creditGaps.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>`;
  if (groups.length === 0)
    return `<section id="credit" aria-labelledby="credit-h">
<h2 id="credit-h">Credit liability <span class="sub">${esc(report.month.label)}: not available</span></h2>
${gaps}
</section>`;
  const rows = groups.map((g) => {
    const c = g.credit!;
    return (
      `<tr><th scope="row">${groupName(report, g)}</th><td class="num">${esc(formatCount(c.users))}</td>` +
      `<td class="num">${esc(groupDigits(c.available, 2))}</td><td class="num">${esc(groupDigits(c.granted, 2))}</td>` +
      `<td class="num">${esc(groupDigits(c.spent, 2))}</td><td class="num">${esc(groupDigits(c.expired, 2))}</td><td>${esc(c.oldestSnapshot)}</td></tr>`
    );
  });
  return (
    `<section id="credit" aria-labelledby="credit-h">
<h2 id="credit-h">Credit liability <span class="sub">at ${esc(groups[0].credit!.monthEnd)}</span></h2>
<p>Platform credit users can still spend is a liability. Amounts are credit units: ` +
    `the API names no currency for credit. Each user counts with the credit extraction of the month's last day, ` +
    `else the earliest after it (rolled back to the month end by its items), else the latest before it. ${esc(creditBasisSentence(report)!)}</p>
${gaps}
<div class="wide"><table class="credit">
<caption>Credit at the month end, per group</caption>
<thead><tr><th scope="col">Group</th><th scope="col" class="num">Users</th>` +
    `<th scope="col" class="num">Available (liability)</th><th scope="col" class="num">Granted</th>` +
    `<th scope="col" class="num">Spent</th><th scope="col" class="num">Expired</th><th scope="col">Oldest extraction</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>
</section>`
  );
}

export function platformBlock(report: RevenueReport): string {
  const groups = report.groups.filter((g) => g.platform);
  if (groups.length === 0) return '';
  const agree = groups.every((g) => g.platform!.available && g.platform!.differs === 0);
  const badge = agree
    ? '<span class="badge ok">agree</span>'
    : groups.some((g) => (g.platform?.differs ?? 0) > 0)
      ? '<span class="badge bad">disagree</span>'
      : '<span class="badge">not compared</span>';
  const explained = groups.flatMap((g) =>
    g.platform!.explained.map(
      (e) => `<tr><th scope="row">${esc(g.name)}</th><td>${esc(e.reason)}</td><td class="num">${e.rows}</td></tr>`,
    ),
  );
  const differs = groups.flatMap((g) =>
    g.platform!.differences.map(
      (d) =>
        `<tr><td>${esc(g.name)}</td><th scope="row">${esc(d.userId)}</th><td class="num">` +
        `${esc(d.platformOrders ?? 'none')}</td><td class="num">${esc(d.lakeOrders)}</td><td class="num">` +
        `${esc(d.platformEgiftOrders ?? 'none')}</td><td class="num">${esc(d.lakeCompleteOrders)}</td>` +
        `<td class="num down">${esc(groupDigits(d.faceValue, 2))}</td><td class="num down">` +
        `${esc(groupDigits(d.cost, 2))}</td><td class="num down">${esc(groupDigits(d.savings, 2))}</td></tr>`,
    ),
  );
  return (
    `<section id="platform" aria-labelledby="platform-h">
<h2 id="platform-h">Platform statistics ${badge}</h2>
<p>The platform's own redemption statistics (per user and month: orders, Complete orders, face value, cost, savings; ` +
    `they count Complete orders only and add currencies together) against the orders in our lake for the same users and month.</p>
<ul>${platformSentences(report)
      .map((p) => `<li>${esc(p)}</li>`)
      .join('')}</ul>
${
  differs.length === 0
    ? ''
    : `<div class="wide"><table class="platform-differences">
<caption>Users whose figures differ (platform − ours for the amounts)</caption>
<thead><tr><th scope="col">Group</th><th scope="col">User</th><th scope="col" class="num">Orders, platform</th>` +
      `<th scope="col" class="num">Orders, ours</th><th scope="col" class="num">Complete, platform</th>` +
      `<th scope="col" class="num">Complete, ours</th><th scope="col" class="num">Face value difference</th>` +
      `<th scope="col" class="num">Cost difference</th><th scope="col" class="num">Savings difference</th></tr></thead>
<tbody>${differs.join('\n')}</tbody>
</table></div>`
}
${
  explained.length === 0
    ? ''
    : `<div class="wide"><table class="platform-explained">
<caption>Differences with a known reason</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Reason</th><th scope="col" class="num">Rows</th></tr></thead>
<tbody>${explained.join('\n')}</tbody>
</table></div>`
}
</section>`
  );
}
