/**
 * What the user commands print: a readable table, or one JSON document (--format json) for scripts, its keys in
 * snake_case (`dry_run`, `quarantine_lines`) but for the platform's answer, printed as the API gave it.
 */
import { snakeJson } from '../shared/json-keys.js';
import type { ActionResult } from './actions.js';
import type { ImportResult } from './import.js';

export type Format = 'table' | 'json';

export function formatImport(r: ImportResult, format: Format, rateLimit: number): string {
  const calls = r.calls.lookups + r.calls.bulk + r.calls.single + r.calls.confirms;
  if (format === 'json') return `${snakeJson({ ...r, totalCalls: calls })}\n`;
  const minutes = calls / rateLimit;
  const lines: string[] = [];
  if (r.dryRun) {
    lines.push(
      `dry run, nothing sent: ${r.rows} rows, ${r.rows - r.rejected.length} to import, ${r.rejected.length} rejected`,
    );
    lines.push(
      `would make at most ${calls} calls (${r.calls.lookups} look-ups, ${r.calls.bulk} bulk, ` +
        `${r.calls.confirms} confirmations): about ${fmtMinutes(minutes)} at ${rateLimit} calls/min`,
    );
  } else {
    lines.push(
      `${r.created.length} created, ${r.existing.length} already existing, ${r.rejected.length} rejected (of ${r.rows} rows)`,
    );
    if (!r.created.length && r.existing.length)
      lines.push('nothing created: every valid row already exists on the platform');
    lines.push(
      `${calls} calls (${r.calls.lookups} look-ups, ` +
        `${r.calls.bulk} bulk${r.calls.single ? `, ${r.calls.single} single creates` : ''}, ` +
        `${r.calls.confirms} confirmations), about ${fmtMinutes(minutes)} at ${rateLimit} calls/min`,
    );
  }
  for (const x of r.rejected) lines.push(`  line ${x.line}: ${x.reason}`);
  return `${lines.join('\n')}\n`;
}

function fmtMinutes(m: number): string {
  return m < 1 ? `${Math.ceil(m * 60)} s` : `${m.toFixed(1)} min`;
}

export function formatAction(r: ActionResult, format: Format): string {
  if (format === 'json') return `${snakeJson(r, { asIs: ['answer'] })}\n`;
  const head = r.dryRun
    ? `dry run, nothing sent: ${r.command} would call ${String(r.answer?.would_send)}`
    : `${r.command}: done`;
  const rows: [string, unknown][] = [];
  if (r.local) rows.push(['local state', `${r.local.state ?? 'unknown'} (${r.local.source})`]);
  if (!r.dryRun) for (const [k, v] of Object.entries(r.answer ?? {})) rows.push([k, v]);
  if (r.forgot)
    rows.push([
      'forgotten locally',
      `${r.forgot.files} files rewritten, ${r.forgot.rows} rows cleared, ${r.forgot.quarantineLines} quarantined records scrubbed`,
    ]);
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return (
    [
      head,
      ...rows.map(
        ([k, v]) =>
          `  ${k.padEnd(width)}  ${v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean)}`,
      ),
    ].join('\n') + '\n'
  );
}
