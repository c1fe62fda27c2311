/** What a run changed in business terms (changes.ts), as the summary's lines: text, and Markdown for the CI. */
import type { RevenueMove, RunChanges } from './changes.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function ordersText(c: RunChanges): string | undefined {
  if (c.orders === undefined) return undefined;
  if (c.orders === null) return 'orders   unknown: the order history could not be read';
  return `orders   ${c.orders.new} new, ${c.orders.changed} changed`;
}

const usersText = (c: RunChanges) =>
  c.users && `users    ${c.users.joined} joined, ${c.users.anonymised} anonymised (since the last users snapshot)`;

/** "group 11 2026-11 GBP 1200.00 → 1265.50 (+65.50)", and what a move in a signed-off month is. */
const moveText = (m: RevenueMove) =>
  `group ${m.group} ${m.month} ${m.currency || '(no currency)'} ${m.before ?? 'none'} → ${m.after} (${m.change})` +
  (m.signedOff ? ' SIGNED OFF: an adjustment, the signed-off figure stands (revenue_adjustments)' : '');

function revenueText(c: RunChanges): string[] {
  if (!c.revenue) return [];
  const { moves, more } = c.revenue;
  if (moves.length === 0) return ['revenue  recognised revenue unchanged in every group and month'];
  return [
    `revenue  recognised revenue moved in ${plural(moves.length + more, 'group-month')} (currency of the orders):`,
    ...moves.map((m) => `  ${moveText(m)}`),
    ...(more ? [`  and ${more} more`] : []),
  ];
}

/** The text summary's block, none when the run has no figure of it (a failed extract). */
export function changesLines(c: RunChanges | undefined): string[] {
  if (!c) return [];
  const lines = [ordersText(c), usersText(c), ...revenueText(c)].filter((l): l is string => Boolean(l));
  return lines.length ? ['changes:', ...lines.map((l) => `  ${l}`)] : [];
}

/** The same block for GITHUB_STEP_SUMMARY: one Markdown line each. */
export function changesMarkdown(c: RunChanges | undefined): string[] {
  const lines = changesLines(c).slice(1);
  return lines.length ? ['**What changed**', '', ...lines.map((l) => `- ${l.trim().replace(/ {2,}/g, ' ')}`), ''] : [];
}
