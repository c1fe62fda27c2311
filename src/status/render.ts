/** `perks status` as text (a terminal, a log), JSON (a scheduler) and Markdown (GITHUB_STEP_SUMMARY). */
import { changeLine } from '../lake/index.js';
import { snakeJson } from '../shared/json-keys.js';
import {
  SCHEMA_DAYS,
  type MartsStatus,
  type MonthsStatus,
  type SchemaStatus,
  type StatusReport,
  type WritebackBacklog,
} from './collect.js';
import { monthStatesText } from '../closes/index.js';
import { hoursText, limitText, type Freshness, type FreshnessOptions } from './freshness.js';
import { inProgressText } from './in-progress.js';

export function statusJson(report: StatusReport, f: Freshness, o: FreshnessOptions): string {
  const { streams: _ignored, ...rest } = report;
  const json = {
    ...rest,
    warn_after_hours: o.warnAfterHours,
    error_after_hours: o.errorAfterHours,
    freshness: f.level,
    marts_freshness: f.marts,
    exit_code: f.exitCode,
    message: f.message ?? null,
    streams: f.streams,
  };
  return `${snakeJson(json, {}, 2)}\n`; // snake_case at every depth (src/shared/json-keys.ts)
}

/** "built 2026-12-01T06:10:00Z (5.0h ago) from the extract of …, 0 extract runs behind; last build success". */
export function martsText(m: MartsStatus | null): string {
  if (!m) return 'never built (`perks build`)';
  const built =
    m.lastSuccessAt === null
      ? 'never built successfully'
      : `built ${m.lastSuccessAt} (${hoursText(m.ageHours!)} ago), ${m.extractsBehind} extract run${m.extractsBehind === 1 ? '' : 's'} behind the lake`;
  const attempt = m.lastAttempt;
  const last = attempt
    ? `; last build ${attempt.outcome === 'error' ? `FAILED at ${attempt.at}: ${attempt.error ?? ''}` : `${attempt.outcome} at ${attempt.at}`}`
    : '';
  return `${built}${last}`;
}

/** The schema's changes, one line each, and the undeclared fields each stream carries now (one line per stream). */
function schemaLines(schema: SchemaStatus): string[] {
  const changes = schema.changes.map((c) => `schema: ${changeLine(c)}`);
  const streams = [...new Set(schema.undeclared.map((u) => u.stream))];
  const undeclared = streams.map((stream) => {
    const fields = schema.undeclared.filter((u) => u.stream === stream);
    const named = fields.slice(0, 10).map((u) => `${u.field} (${u.types.join(' or ') || 'null'})`);
    const more = fields.length > 10 ? ` and ${fields.length - 10} more` : '';
    return `schema: ${stream} carries ${fields.length} undeclared field${fields.length === 1 ? '' : 's'}, kept in _extra: ${named.join(', ')}${more}`;
  });
  return changes.length || undeclared.length
    ? [...changes, ...undeclared]
    : [`schema: no change in the last ${SCHEMA_DAYS} days`];
}

const backlogText = (w: WritebackBacklog) =>
  w.unknown
    ? `unknown (${w.unknown})`
    : `${w.toSend} to send, ${w.pending} pending (outcome unknown), ${w.rejected} rejected`;

/**
 * Each month once, in month order, in the marts' month_state words (src/closes/month-state.ts monthStatesText);
 * "none signed off", or "signed off unknown (…)" when the close record cannot say.
 */
function monthsText(m: MonthsStatus): string {
  const signed =
    m.signedOff === null
      ? 'signed off unknown (the close record does not verify: see `perks closes`)'
      : m.signedOff.length === 0
        ? 'none signed off'
        : '';
  return [m.note ?? monthStatesText(m.monthStates), signed].filter((t) => t !== '').join('; ');
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

export function statusText(report: StatusReport, f: Freshness, o: FreshnessOptions): string {
  const lines = [
    `status of ${report.outDir} at ${report.at} (warn after ${limitText(o.warnAfterHours)}, error after ${limitText(o.errorAfterHours)})`,
  ];
  const running = inProgressText(report.inProgress);
  if (running) lines.push(running);
  lines.push(
    ...table(
      ['stream', 'group', 'watermark', 'last success', 'age', 'rows', 'last run', 'freshness'],
      f.streams.map((s) => [
        s.stream,
        s.group === null ? '-' : String(s.group),
        s.watermark ?? '-',
        s.lastSuccessAt ?? 'never',
        s.ageHours === null ? '-' : hoursText(s.ageHours),
        String(s.rows),
        s.lastRun?.outcome ?? '-',
        s.freshness,
      ]),
    ),
  );
  lines.push(`marts: ${martsText(report.marts)} (${f.marts})`);
  lines.push(`write-back backlog: ${backlogText(report.writeback)}`);
  for (const m of report.months) lines.push(`months of group ${m.group}: ${monthsText(m)}`);
  lines.push(...schemaLines(report.schema));
  lines.push(`freshness: ${f.level}${f.message ? `: ${f.message}` : ''}`);
  return `${lines.join('\n')}\n`;
}

export function statusMarkdown(report: StatusReport, f: Freshness, o: FreshnessOptions): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `## Perks data freshness: ${f.level}`,
    '',
    `Warn after ${limitText(o.warnAfterHours)}, error after ${limitText(o.errorAfterHours)}.${f.message ? ` **${cell(f.message)}**` : ''}`,
    '',
    '| stream | group | watermark | last success | age | rows | last run | freshness |',
    '|---|---|---|---|---|---|---|---|',
    ...f.streams.map(
      (s) =>
        `| ${s.stream} | ${s.group ?? '-'} | ${s.watermark ?? '-'} | ${s.lastSuccessAt ?? 'never'} |` +
        ` ${s.ageHours === null ? '-' : hoursText(s.ageHours)} | ${s.rows} | ${s.lastRun?.outcome ?? '-'} | ${s.freshness} |`,
    ),
    '',
    `Marts: ${cell(martsText(report.marts))} (${f.marts}).`,
    '',
    `Write-back backlog: ${cell(backlogText(report.writeback))}.`,
    '',
    ...report.months.map((m) => `- months of group ${m.group}: ${cell(monthsText(m))}`),
    '',
    ...schemaLines(report.schema).map((l) => `- ${cell(l)}`),
    '',
  ].join('\n');
}
