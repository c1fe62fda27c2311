/**
 * What `perks status` reads, without a call to the API or a lock: the run manifests (<out>/runs), the
 * extract state (<out>/state), the lake's row counts, the write-back's dry run, and the orders state's
 * partial/final/provisional months. Everything is read as it is now; a run going on beside it is not waited for.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import {
  readRunManifests,
  readSchemaHistory,
  recentChanges,
  scanSql,
  streamDir,
  streamGlob,
  undeclaredFields,
  withLakeConnection,
  type RunManifest,
  type SchemaChange,
} from '../lake/index.js';
import {
  closesInForce,
  extractStateOf,
  monthDays,
  readCloses,
  monthStatesOf,
  nextMonth,
  readOrdersState,
  type MonthWithState,
} from '../closes/index.js';
import { runWriteback } from '../writeback/index.js';
import { readBuildRecord } from '../transform/index.js';
import { inProgress, type InProgress } from './in-progress.js';
import { outputAt, type Output } from '../output/index.js';

type Manifest = RunManifest;

/** Streams whose latest snapshot is the current data (the others add files: windows, refresh batches). */
const FULL_SNAPSHOTS = new Set(['groups', 'users', 'offers']);

export interface StreamGroupStatus {
  stream: string;
  /** null: an organisation-wide stream (offers). */
  group: number | null;
  /** Windowed streams: the first local day not extracted yet. */
  watermark: string | null;
  lastSuccessAt: string | null;
  /** Hours since the last successful extract (null: never). */
  ageHours: number | null;
  /** Rows in the lake (full snapshots: the latest snapshot). */
  rows: number;
  lastRun: { runId: string; at: string; outcome: 'success' | 'error' | 'skipped'; error?: string } | null;
}

export interface MonthsStatus {
  group: number;
  /**
   * The months from the extract's first to its watermark by their state (src/closes/month-state.ts, the marts'
   * month_state): partial (the extract starts after the month's first day), final (the watermark is past their
   * end plus the lookback: the data will not change) and provisional. Final is not signed off (signedOff).
   */
  partial: string[];
  final: string[];
  provisional: string[];
  note?: string;
  /** Months finance signed off with `perks close` (in force: not reopened); null when the record does not verify. */
  signedOff: string[] | null;
  /**
   * Each month once, in month order, by the marts' month_state: signed off when signed off, else the extract's state
   * (the lists above give the two apart: a signed-off month is also in `final`, or wherever its data stands).
   */
  monthStates: MonthWithState[];
}

export interface WritebackBacklog {
  /** Rows the write-back models produce that were never posted: the next run posts them (within its limit). */
  toSend: number;
  /** Rows posted whose outcome is unknown yet (looked up by the next run). */
  pending: number;
  /** Rows the API refused that the models still produce (sent again only with --retry-rejected). */
  rejected: number;
  /** Why the backlog is unknown, when it is. */
  unknown?: string;
}

/** The marts (warehouse, marts/*.parquet, the reports built from them) against the lake they were built from. */
export interface MartsStatus {
  /** The last successful build (null: none yet). */
  lastSuccessAt: string | null;
  /** The newest extract run that build read (null: none). */
  builtFromExtractAt: string | null;
  /** Hours since the last successful build (null: never built). */
  ageHours: number | null;
  /** Extract runs finished after the one the marts were built from: the marts are that far behind the lake. */
  extractsBehind: number;
  lastAttempt: { at: string; outcome: 'success' | 'warn' | 'error'; error?: string } | null;
}

export interface StatusReport {
  outDir: string;
  at: string;
  runs: number;
  lastRun: { runId: string; at: string; status: string } | null;
  streams: StreamGroupStatus[];
  writeback: WritebackBacklog;
  months: MonthsStatus[];
  /** null: no build has been recorded (`<out>/state/build.json`). */
  marts: MartsStatus | null;
  schema: SchemaStatus;
  /** A run holding the output's lock now (null: none). */
  inProgress: InProgress | null;
}

/** What the lake's schema history says (src/lake/schema-history.ts). */
export interface SchemaStatus {
  /** New fields and type changes of the last SCHEMA_DAYS days, and declared fields absent now. */
  changes: SchemaChange[];
  /** Undeclared fields the latest run of their stream carried (kept in `_extra`). */
  undeclared: { stream: string; field: string; types: string[] }[];
}

/** How far back status names new fields and type changes. */
export const SCHEMA_DAYS = 30;

async function schemaStatus(outDir: string, at: Date): Promise<SchemaStatus> {
  const history = await readSchemaHistory(outDir);
  const from = new Date(at.getTime() - SCHEMA_DAYS * 86_400_000).toISOString().slice(0, 10);
  return { changes: recentChanges(history, from), undeclared: undeclaredFields(history) };
}

type Outcome = 'success' | 'error' | 'skipped';
const outcomeOf = (s: Manifest['streams'][number], group: number | null): Outcome =>
  s.status === 'error' && (s.failedGroups === undefined || (group !== null && s.failedGroups.includes(group)))
    ? 'error'
    : s.status === 'skipped'
      ? 'skipped'
      : 'success';

async function readWatermark(outDir: string, stream: string, group: number | null): Promise<string | null> {
  if (group === null) return null;
  const text = await readFile(outputAt(outDir).state(stream, `${group}.json`), 'utf8').catch(() => undefined);
  if (text === undefined) return null;
  try {
    const watermark = (JSON.parse(text) as { watermark?: unknown }).watermark;
    return typeof watermark === 'string' ? watermark : null;
  } catch {
    return null;
  }
}

/** Rows per group of each stream in the lake, one DuckDB query per stream (counts come from Parquet metadata). */
async function lakeRows(outDir: string, streams: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  await withLakeConnection(async (c) => {
    for (const stream of streams) {
      const dir = streamDir(outDir, stream);
      if (!existsSync(dir)) continue;
      const g = stream === 'offers' ? 'NULL' : 'organisation_group_id'; // offers are organisation-wide
      const source = `SELECT ${g} AS g${FULL_SNAPSHOTS.has(stream) ? ', _snapshot_date AS d' : ''} FROM ${scanSql('$glob')}`;
      const current = FULL_SNAPSHOTS.has(stream) ? `${source} QUALIFY d = max(d) OVER (PARTITION BY g)` : source;
      const sql = `SELECT g::VARCHAR AS g, count(*)::BIGINT AS n FROM (${current}) GROUP BY ALL`;
      const rows = await c.runAndReadAll(sql, { glob: streamGlob(outDir, stream) }).then(
        (r) => r.getRowObjectsJson() as { g: string | null; n: string }[],
        () => [],
      );
      for (const r of rows) counts.set(`${stream}/${r.g ?? ''}`, Number(r.n));
    }
  });
  return counts;
}

async function writebackBacklog(output: Output, config: Config): Promise<WritebackBacklog> {
  if (!existsSync(output.warehouse)) return { toSend: 0, pending: 0, rejected: 0, unknown: 'no warehouse yet' };
  try {
    // A dry run evaluates the write-back models against the marts and the ledger: no call, no write, no lock.
    const r = await runWriteback({ output, config, dryRun: true, previewRows: 0 });
    return { toSend: r.to_send, pending: r.pending, rejected: r.skipped_rejected };
  } catch (err) {
    return {
      toSend: 0,
      pending: 0,
      rejected: 0,
      unknown: (err instanceof Error ? err.message : String(err)).split('\n')[0],
    };
  }
}

/** The months from the orders state's first day to its watermark, each partial, final or provisional (one rule). */
async function monthsOf(outDir: string, group: number, signed: Map<number, string[]> | null): Promise<MonthsStatus> {
  const signedOff = signed === null ? null : (signed.get(group) ?? []);
  const state = await readOrdersState(outDir, group);
  const out: MonthsStatus = {
    group,
    partial: [],
    final: [],
    provisional: [],
    signedOff,
    monthStates: monthStatesOf(state, signedOff ?? []),
  };
  if (state === undefined || 'error' in state || state.watermark === undefined || state.firstDay === undefined) {
    return {
      ...out,
      note:
        state === undefined
          ? 'no orders state'
          : 'error' in state
            ? `orders state unreadable: ${String(state.error)}`
            : 'first extract unfinished',
    };
  }
  const last = state.watermark.slice(0, 7);
  for (let ym = state.firstDay.slice(0, 7); ym <= last; ym = nextMonth(ym))
    out[extractStateOf(monthDays(ym), state)].push(ym);
  return out;
}

/** Per group, the months signed off and in force, in order; null when the close record does not verify. */
async function signedOffMonths(output: Output): Promise<Map<number, string[]> | null> {
  let records;
  try {
    records = await readCloses(output);
  } catch {
    return null; // `perks closes` names the broken line; the status only says it cannot tell
  }
  const byGroup = new Map<number, string[]>();
  for (const r of closesInForce(records).values())
    byGroup.set(r.organisation_group_id, [...(byGroup.get(r.organisation_group_id) ?? []), r.month].sort());
  return byGroup;
}

async function martsStatus(output: Output, manifests: Manifest[], at: Date): Promise<MartsStatus | null> {
  const record = await readBuildRecord(output);
  if (!record) return null;
  const success = record.lastSuccess;
  const from = success?.lakeAt ?? null;
  const a = record.lastAttempt;
  return {
    lastSuccessAt: success?.at ?? null,
    builtFromExtractAt: from,
    ageHours: success ? Math.max(0, (at.getTime() - Date.parse(success.at)) / 3_600_000) : null,
    extractsBehind: manifests.filter((m) => from === null || m.finishedAt > from).length,
    lastAttempt: {
      at: a.at,
      outcome: !a.ok ? 'error' : a.warnings > 0 ? 'warn' : 'success',
      ...(a.error ? { error: a.error } : {}),
    },
  };
}

export async function collectStatus(output: Output, config: Config, at: Date): Promise<StatusReport> {
  const outDir = output.dir;
  const manifests = await readRunManifests(outDir);
  const seen = new Map<string, StreamGroupStatus>();
  for (const m of manifests) {
    for (const s of m.streams) {
      // the groups it ran for, and those it failed for (a failed group may have no tally)
      const groups = [...new Set<number | null>([...s.groups.map((g) => g.group ?? null), ...(s.failedGroups ?? [])])];
      for (const group of groups) {
        const key = `${s.name}/${group ?? ''}`;
        const entry = seen.get(key) ?? {
          stream: s.name,
          group,
          watermark: null,
          lastSuccessAt: null,
          ageHours: null,
          rows: 0,
          lastRun: null,
        };
        const outcome = outcomeOf(s, group);
        entry.lastRun = {
          runId: m.runId,
          at: m.finishedAt,
          outcome,
          ...(outcome === 'error' && s.error ? { error: s.error } : {}),
        };
        if (outcome === 'success') entry.lastSuccessAt = m.finishedAt;
        seen.set(key, entry);
      }
    }
  }
  // a stream's run-wide tally (no group) is shown only for a stream that has no per-group ones (offers)
  const grouped = new Set([...seen.values()].filter((e) => e.group !== null).map((e) => e.stream));
  const streams = [...seen.values()]
    .filter((e) => e.group !== null || !grouped.has(e.stream))
    .sort((a, b) => a.stream.localeCompare(b.stream) || (a.group ?? 0) - (b.group ?? 0));
  const rows = await lakeRows(outDir, [...new Set(streams.map((s) => s.stream))]);
  for (const s of streams) {
    s.watermark = await readWatermark(outDir, s.stream, s.group);
    s.rows = rows.get(`${s.stream}/${s.group ?? ''}`) ?? 0;
    s.ageHours =
      s.lastSuccessAt === null ? null : Math.max(0, (at.getTime() - Date.parse(s.lastSuccessAt)) / 3_600_000);
  }
  const groups = [...new Set(streams.filter((s) => s.stream === 'orders' && s.group !== null).map((s) => s.group!))];
  const last = manifests.at(-1);
  return {
    // the output as given (./output, not the machine's absolute path: the status is shared), or the store's URL
    outDir: output.name,
    at: at.toISOString(),
    runs: manifests.length,
    lastRun: last ? { runId: last.runId, at: last.finishedAt, status: last.status } : null,
    streams,
    writeback: await writebackBacklog(output, config),
    marts: await martsStatus(output, manifests, at),
    months: await signedOffMonths(output).then((signed) => Promise.all(groups.map((g) => monthsOf(outDir, g, signed)))),
    schema: await schemaStatus(outDir, at),
    inProgress: await inProgress(outDir),
  };
}
