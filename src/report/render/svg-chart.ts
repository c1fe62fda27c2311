/**
 * Revenue per day as an inline SVG bar chart: no script, no fonts, no network, so it renders the same
 * on screen, on paper and in a CI artefact. Pixel positions use floats; the amounts shown do not.
 */
import type { DayLine } from '../../closes/index.js';
import { esc, formatMoney } from './format.js';

const W = 760;
const H = 240;
const PAD = { left: 84, right: 12, top: 26, bottom: 38 };

export interface ChartInput {
  readonly id: string;
  readonly title: string;
  readonly currency: string;
  readonly days: readonly DayLine[];
  /** The month's group revenue from the mart, exact, for the description. */
  readonly total: string;
  /** A bar per day (default), or per month: `days[i].day` is then the month's first day. */
  readonly period?: 'day' | 'month';
  /** A word per bar, or null: a noted bar is drawn pale and its title says the word ("partial"). */
  readonly notes?: readonly (string | null)[];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The label under bar i, if it has one: every fifth day (and the first and last), or every month. */
function barLabel(input: ChartInput, d: DayLine, i: number): string | undefined {
  if (input.period === 'month') return MONTHS[Number(d.day.slice(5, 7)) - 1];
  const dayNo = Number(d.day.slice(8));
  const last = i === input.days.length - 1;
  return dayNo === 1 || last || (dayNo % 5 === 0 && input.days.length - dayNo >= 2) ? String(dayNo) : undefined;
}

function barTitle(input: ChartInput, d: DayLine, note: string | null): string {
  return input.period === 'month'
    ? `${d.day.slice(0, 7)}${note ? ` (${note})` : ''}: ${formatMoney(d.group_revenue, input.currency)}`
    : `${d.day}: ${formatMoney(d.group_revenue, input.currency)} (${d.orders} orders)`;
}

/** What the chart shows in one sentence: its total and its highest bar (its description, and a caption on paper). */
export function chartSummary(input: ChartInput): string {
  const peak = input.days.reduce<DayLine | undefined>(
    (best, d) => (best === undefined || Number(d.group_revenue) > Number(best.group_revenue) ? d : best),
    undefined,
  );
  return description(input, peak);
}

function description(input: ChartInput, peak: DayLine | undefined): string {
  const month = input.period === 'month';
  const high =
    peak && Number(peak.group_revenue) > 0
      ? `; highest ${month ? `in ${peak.day.slice(0, 7)}` : `on ${peak.day}`} with ${formatMoney(peak.group_revenue, input.currency)}.`
      : '.';
  return `Total ${formatMoney(input.total, input.currency)} over ${input.days.length} ${month ? 'months' : 'days'}${high}`;
}

export function revenueChart(input: ChartInput): string {
  const values = input.days.map((d) => Number(d.group_revenue));
  const top = niceCeiling(Math.max(0, ...values));
  const bottom = -niceCeiling(Math.max(0, ...values.map((v) => -v)));
  const span = top - bottom || 1;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const y = (v: number) => PAD.top + ((top - v) / span) * plotH;
  const band = plotW / Math.max(1, input.days.length);
  const barW = Math.max(1, band * 0.72);
  const ticks = [bottom, bottom / 2, 0, top / 2, top].filter(
    (v, i, all) => all.indexOf(v) === i && v >= bottom && v <= top,
  );
  const grid = ticks
    .map(
      (v) =>
        `<line class="grid${v === 0 ? ' zero' : ''}" x1="${PAD.left}" x2="${W - PAD.right}" y1="${r(y(v))}" y2="${r(y(v))}"/>` +
        `<text class="tick" x="${PAD.left - 6}" y="${r(y(v) + 4)}" text-anchor="end">${esc(tickLabel(v))}</text>`,
    )
    .join('');
  const bars = input.days
    .map((d, i) => {
      const v = Number(d.group_revenue);
      const x = PAD.left + i * band + (band - barW) / 2;
      // A day with any revenue keeps a visible sliver, so small days are not mistaken for empty ones.
      const h = v === 0 ? 0 : Math.max(1.5, Math.abs(y(v) - y(0)));
      const y0 = v > 0 ? y(0) - h : y(0);
      const text = barLabel(input, d, i);
      const note = input.notes?.[i] ?? null;
      const label =
        text === undefined
          ? ''
          : `<text class="day" x="${r(x + barW / 2)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${esc(text)}</text>`;
      return (
        `<rect class="bar${v < 0 ? ' negative' : ''}${note ? ' noted' : ''}" x="${r(x)}" y="${r(y0)}" width="` +
        `${r(barW)}" height="${r(h)}" data-day="${d.day}" data-value="${esc(d.group_revenue)}"${note ? ` data-note="${esc(note)}"` : ''}>` +
        `<title>${esc(barTitle(input, d, note))}</title></rect>${label}`
      );
    })
    .join('');
  const desc = chartSummary(input);
  return (
    `<svg class="chart" id="${esc(input.id)}" role="img" viewBox="0 0 ${W} ${H}" preserveAspectRatio="xMidYMid meet"` +
    ` aria-labelledby="${esc(input.id)}-t ${esc(input.id)}-d" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${esc(input.id)}-t">${esc(input.title)}</title><desc id="${esc(input.id)}-d">${esc(desc)}</desc>` +
    `<text class="tick" x="${PAD.left - 6}" y="12" text-anchor="end">${esc(input.currency)}</text>` +
    `${grid}${bars}<text class="axis" x="${r(PAD.left + plotW / 2)}" y="${H - 3}" text-anchor="middle">` +
    `${input.period === 'month' ? 'Month' : 'Day of month'}</text></svg>`
  );
}

/** The smallest 1, 2 or 5 × 10ⁿ at or above v, so the axis reads in round numbers. */
function niceCeiling(v: number): number {
  if (v <= 0) return 0;
  const base = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 5, 10]) if (step * base >= v) return step * base;
  return 10 * base;
}

function tickLabel(v: number): string {
  const text = Number.isInteger(v) ? String(v) : v.toFixed(2);
  return text.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function r(v: number): string {
  return String(Math.round(v * 10) / 10);
}
