/**
 * What is worth telling someone, as data: one event per condition, built from what the program already
 * knows (a run's results, the status report, the close record, the erasure queue). An event's text is one
 * line of figures the program made itself; an error's own message is added only through `safeText`,
 * since it may quote a record's value.
 */
import { resolve } from 'node:path';
import { acceptCommand, type ExtractResult } from '../extract/index.js';
import { changeLine, type SchemaChange } from '../lake/index.js';
import type { RunSummary } from '../run/index.js';
import type { Freshness, StatusReport } from '../status/index.js';
import { redact } from '../shared/redact.js';

export const ALERT_KINDS = [
  'run_failed',
  'run_partial',
  'data_stale',
  'schema_change',
  'quarantine',
  'change_held',
  'close_record',
  'writeback_backlog',
  'erasure_pending',
  'test',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type Severity = 'info' | 'warning' | 'error';

export interface AlertEvent {
  kind: AlertKind;
  severity: Severity;
  /** One line: what happened and what to do. */
  text: string;
  /** The condition it reports: the same condition alerts once per day (dedupe.ts). */
  condition: string;
  runId?: string;
  /** The figures behind the text: counts, ids, days (never a personal value). */
  figures: Record<string, string | number | boolean | string[] | number[]>;
}

/**
 * A message made safe to send: secrets redacted, the output directory's path shortened to `<out>`, e-mail
 * addresses and quoted literals (an error quoting a record's value) masked.
 */
export function safeText(text: string, outDir?: string): string {
  let out = redact(text.split('\n')[0]);
  if (outDir) out = out.split(resolve(outDir)).join('<out>');
  return out
    .replace(/[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[A-Za-z]{2,}/g, '<email>')
    .replace(/'[^']*'/g, "'…'")
    .replace(/"[^"]*"/g, '"…"')
    .slice(0, 500);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The outcome of `perks run`: failed (exit 1, 2, 3) or partial (exit 4), naming the steps. */
export function runOutcomeEvent(command: string, summary: RunSummary): AlertEvent | undefined {
  const code = summary.exitCode;
  if (code === 0) return undefined;
  const failed = code !== 4;
  const steps = summary.steps.filter((s) => (failed ? s.status === 'error' : s.exitCode === 4));
  const runId = summary.extract?.runId;
  const why = steps.map((s) => `${s.name}: ${safeText(s.detail, summary.outDir)}`).join('; ');
  return {
    kind: failed ? 'run_failed' : 'run_partial',
    severity: failed ? 'error' : 'warning',
    text: `${command} ${runId ?? ''} ${failed ? 'failed' : 'finished partial'} (exit ${code})${why ? `: ${why}` : ''}`.replace(
      /\s+/g,
      ' ',
    ),
    condition: `${failed ? 'run_failed' : 'run_partial'}:${command}:${steps.map((s) => s.name).join(',')}`,
    ...(runId ? { runId } : {}),
    figures: { exit_code: code, steps: steps.map((s) => s.name) },
  };
}

/** An extract's own events: its outcome (unless the caller's covers it), quarantine above the threshold, schema changes. */
export function extractEvents(r: ExtractResult, outDir: string, o: { outcome: boolean }): AlertEvent[] {
  const events: AlertEvent[] = [];
  const command = 'perks extract';
  if (o.outcome && r.exitCode !== 0) {
    const failed = r.streams.filter((s) => s.status === 'error');
    const partial = r.exitCode === 4;
    events.push({
      kind: partial ? 'run_partial' : 'run_failed',
      severity: partial ? 'warning' : 'error',
      text: `${command} ${r.runId} ${partial ? 'finished partial' : 'failed'} (exit ${r.exitCode}): ${
        failed.length
          ? failed.map((s) => `${s.name}: ${safeText(s.error ?? 'failed', outDir)}`).join('; ')
          : safeText(r.heldMessage ?? r.quarantine?.message ?? 'see its summary', outDir)
      }`,
      condition: `${partial ? 'run_partial' : 'run_failed'}:${command}:${failed.map((s) => s.name).join(',')}`,
      runId: r.runId,
      figures: { exit_code: r.exitCode, streams: failed.map((s) => s.name) },
    });
  }
  const q = r.quarantine;
  if (q?.above)
    events.push({
      kind: 'quarantine',
      severity: 'warning',
      text: `${safeText(q.message ?? `quarantined ${q.quarantined} records`, outDir)}: see <out>/quarantine/`,
      condition: 'quarantine',
      runId: r.runId,
      figures: { quarantined: q.quarantined, records: q.records, threshold: q.threshold },
    });
  if (r.held?.length)
    events.push({
      kind: 'change_held',
      severity: 'error',
      text: safeText(r.heldMessage ?? 'a re-read of a final month was held', outDir),
      condition: `change_held:${r.held.map((h) => `${h.group}/${h.month}`).join(',')}`,
      runId: r.runId,
      figures: { months: r.held.map((h) => `${h.group}/${h.month}`), accept: acceptCommand(r.held) },
    });
  events.push(...schemaEvents(r.schemaChanges ?? [], r.runId));
  return events;
}

/** One event per stream whose fields changed in the run: which fields, how, since when. */
export function schemaEvents(changes: readonly SchemaChange[], runId?: string): AlertEvent[] {
  const streams = [...new Set(changes.map((c) => c.stream))];
  return streams.map((stream) => {
    const mine = changes.filter((c) => c.stream === stream);
    const keys = mine.map((c) => `${c.field}/${c.kind}`).sort();
    return {
      kind: 'schema_change',
      // a new field is news; a declared field gone or a type changed may break what reads it
      severity: mine.some((c) => c.kind !== 'new') ? 'warning' : 'info',
      text: `${plural(mine.length, 'schema change')}: ${mine.map(changeLine).join('; ')}`,
      condition: `schema_change:${stream}:${keys.join(',')}`,
      ...(runId ? { runId } : {}),
      figures: {
        stream,
        new: mine.filter((c) => c.kind === 'new').map((c) => c.field),
        type_changed: mine.filter((c) => c.kind === 'type').map((c) => c.field),
        absent: mine.filter((c) => c.kind === 'absent').map((c) => c.field),
        since: mine[0].day,
      },
    };
  });
}

/** The status report's events: stale data, a write-back backlog above the threshold. */
export function statusEvents(report: StatusReport, freshness: Freshness, backlogThreshold: number): AlertEvent[] {
  const events: AlertEvent[] = [];
  if (freshness.level !== 'fresh') {
    const stale = freshness.streams.filter((s) => s.freshness !== 'fresh');
    const names = [...new Set(stale.map((s) => s.stream))].sort();
    if (freshness.marts !== 'fresh') names.push('marts');
    events.push({
      kind: 'data_stale',
      severity: freshness.level === 'error' ? 'error' : 'warning',
      text: safeText(freshness.message ?? 'data is stale', report.outDir),
      condition: `data_stale:${freshness.level}:${names.join(',')}`,
      figures: {
        level: freshness.level,
        stale: stale.map((s) => `${s.stream}${s.group === null ? '' : `/${s.group}`}`),
        marts: freshness.marts,
      },
    });
  }
  const w = report.writeback;
  if (!w.unknown && w.rejected + w.pending > backlogThreshold)
    events.push({
      kind: 'writeback_backlog',
      severity: 'warning',
      text:
        `write-back backlog: ${plural(w.rejected, 'row')} rejected and ${plural(w.pending, 'row')} pending, ` +
        `above ${backlogThreshold} (PERKS_ALERT_BACKLOG): \`perks writeback --verify\`, then fix and \`perks writeback --retry-rejected\``,
      condition: 'writeback_backlog',
      figures: { rejected: w.rejected, pending: w.pending, to_send: w.toSend, threshold: backlogThreshold },
    });
  return events;
}

export function closeRecordEvent(message: string, outDir: string): AlertEvent {
  return {
    kind: 'close_record',
    severity: 'error',
    text: safeText(message, outDir),
    condition: 'close_record',
    figures: {},
  };
}

export function erasureEvent(owed: readonly { id: number; group: number }[]): AlertEvent | undefined {
  if (!owed.length) return undefined;
  const groups = [...new Set(owed.map((o) => o.group))].sort((a, b) => a - b);
  return {
    kind: 'erasure_pending',
    severity: 'error',
    text:
      `the erasure queue is not drained: ${plural(owed.length, 'user')} anonymised upstream still to be forgotten` +
      ` in group${groups.length === 1 ? '' : 's'} ${groups.join(', ')}: run \`perks forget --anonymised\``,
    condition: 'erasure_pending',
    figures: { users: owed.length, groups },
  };
}

export function testEvent(): AlertEvent {
  return {
    kind: 'test',
    severity: 'info',
    text: 'a test alert from `perks alert test`: this webhook receives the pipeline’s alerts',
    condition: 'test',
    figures: { sample: true },
  };
}
