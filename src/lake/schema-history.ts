/**
 * The lake's schema history: per stream, every field path its records carried (declared or not), the
 * JSON types seen, when each was first and last seen (run and day), and for a declared field the run
 * from which it stopped arriving. docs/assumptions.md (Lake: schema history).
 *
 * Each extract writes what its records carried into its run manifest (`schema`); the history is those
 * manifests folded together, kept in `<out>/lake/_schema_history.json` with the run ids it holds, so a
 * manifest it has not folded yet (a worker that finished beside another, a run killed after its manifest)
 * is folded by the next reader. Merging is by earliest and latest, so the order of folding does not matter.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from './atomic-file.js';
import { LAKE_DIR_MODE } from './modes.js';
import { lakeRoot, runsRoot } from './paths.js';
import { readRunManifestFile } from './run-manifest.js';
import { camelKeys, snakeKeys, type KeyRules } from '../shared/json-keys.js';
import { JSON_TYPES, type FieldsSeen, type JsonType } from './projector.js';

/** What one stream's landed records carried over a run. */
export interface StreamSeen {
  records: number;
  fields: FieldsSeen;
}

/** One run's observation, as its manifest keeps it. */
export interface RunSeen {
  runId: string;
  /** The run's instant (its clock's start: the upper bound), ISO. */
  at: string;
  streams: Record<string, StreamSeen>;
}

const Mark = z.object({ run: z.string(), at: z.string(), day: z.string() });
export type Mark = z.infer<typeof Mark>;
const Counted = Mark.extend({ count: z.number() });
type Counted = z.infer<typeof Counted>;

const FieldHistory = z.object({
  /** As of the latest run that carried it (a field declared later, promoted, becomes true). */
  declared: z.boolean(),
  first: Counted,
  last: Counted,
  types: z.partialRecord(z.enum(JSON_TYPES), z.object({ first: Counted, last: Counted })),
  /** A declared field no record carried since this run (where its parent object was present). */
  absentSince: Mark.optional(),
});
export type FieldHistory = z.infer<typeof FieldHistory>;

const StreamHistory = z.object({ first: Mark, last: Counted, fields: z.record(z.string(), FieldHistory) });
export type StreamHistory = z.infer<typeof StreamHistory>;

export const SchemaHistory = z.object({
  version: z.literal(1),
  /** The run ids folded in. */
  runs: z.array(z.string()),
  streams: z.record(z.string(), StreamHistory),
});
export type SchemaHistory = z.infer<typeof SchemaHistory>;

export const schemaHistoryPath = (outDir: string) => join(lakeRoot(outDir), '_schema_history.json');

/** The file's keys are snake_case (`absent_since`), but for the names of streams, fields and JSON types; camelCase read too. */
const HISTORY_KEYS: KeyRules = { dataKeys: ['streams', 'streams.*.fields', 'streams.*.fields.*.types'] };

const emptyHistory = (): SchemaHistory => ({ version: 1, runs: [], streams: {} });
const markOf = (run: RunSeen): Mark => ({ run: run.runId, at: run.at, day: run.at.slice(0, 10) });
const later = (a: Mark, b: Mark) => a.at > b.at || (a.at === b.at && a.run > b.run);

/** Adds a commit's fields to a run's; `own` names the columns the pipeline sets itself (not the API's). */
export function addFieldsSeen(into: StreamSeen, rows: number, fields: FieldsSeen, own: readonly string[]): void {
  into.records += rows;
  for (const [path, f] of Object.entries(fields)) {
    if (own.includes(path)) continue;
    const to = (into.fields[path] ??= { declared: f.declared, count: 0, types: {} });
    to.count += f.count;
    for (const [t, n] of Object.entries(f.types) as [JsonType, number][]) to.types[t] = (to.types[t] ?? 0) + n;
  }
}

/** Whether a run's records gave a field the chance to appear: its parent object was there (top level: any record). */
export function hadRoomFor(path: string, seen: StreamSeen): boolean {
  if (path.endsWith('[]')) return false; // a list's items, not a field: an empty list has none
  const cut = path.lastIndexOf('.');
  if (cut < 0) return seen.records > 0;
  return (seen.fields[path.slice(0, cut)]?.types.object ?? 0) > 0;
}

/** The history with one more run folded in (a run already folded is left out). */
export function foldRun(history: SchemaHistory, run: RunSeen): SchemaHistory {
  if (history.runs.includes(run.runId)) return history;
  const out = structuredClone(history);
  out.runs.push(run.runId);
  const mark = markOf(run);
  for (const [name, seen] of Object.entries(run.streams)) {
    if (seen.records <= 0) continue; // nothing landed: nothing seen, nothing missing
    const stream = (out.streams[name] ??= { first: mark, last: { ...mark, count: seen.records }, fields: {} });
    if (later(stream.first, mark)) stream.first = mark;
    if (later(mark, stream.last)) stream.last = { ...mark, count: seen.records };
    for (const [path, f] of Object.entries(seen.fields)) foldField(stream, path, f, mark);
    markAbsent(stream, seen, mark);
  }
  return out;
}

/** One field as a run saw it: its first and last sighting, and each JSON type's. */
function foldField(stream: StreamHistory, path: string, f: StreamSeen['fields'][string], mark: Mark): void {
  const here = { ...mark, count: f.count };
  const field = (stream.fields[path] ??= { declared: f.declared, first: here, last: here, types: {} });
  if (later(field.first, mark)) field.first = here;
  if (!later(field.last, mark)) {
    field.last = here;
    field.declared = f.declared;
  }
  for (const [t, n] of Object.entries(f.types) as [JsonType, number][]) {
    const type = (field.types[t] ??= { first: { ...mark, count: n }, last: { ...mark, count: n } });
    if (later(type.first, mark)) type.first = { ...mark, count: n };
    if (later(mark, type.last)) type.last = { ...mark, count: n };
  }
  if (field.absentSince && later(field.last, field.absentSince)) delete field.absentSince;
}

/** The declared fields a later run had room for and did not see: absent since its mark (the earliest). */
function markAbsent(stream: StreamHistory, seen: StreamSeen, mark: Mark): void {
  for (const [path, field] of Object.entries(stream.fields)) {
    if (!field.declared || seen.fields[path] || !later(mark, field.last) || !hadRoomFor(path, seen)) continue;
    if (!field.absentSince || later(field.absentSince, mark)) field.absentSince = mark;
  }
}

const ManifestSchema = z.looseObject({
  runId: z.string(),
  upperBound: z.string(),
  schema: z.looseObject({
    streams: z.record(
      z.string(),
      z.object({
        records: z.number(),
        fields: z.record(
          z.string(),
          z.object({
            declared: z.boolean(),
            count: z.number(),
            types: z.partialRecord(z.enum(JSON_TYPES), z.number()),
          }),
        ),
      }),
    ),
  }),
});

/** The history as the lake keeps it plus every run manifest not folded in yet (nothing is written). */
export async function readSchemaHistory(outDir: string): Promise<SchemaHistory> {
  const text = await readFile(schemaHistoryPath(outDir), 'utf8').catch(() => undefined);
  // an unreadable history is folded again from the manifests
  let history = (text && SchemaHistory.safeParse(camelKeys(safeJson(text), HISTORY_KEYS)).data) || emptyHistory();
  const dir = runsRoot(outDir);
  if (!existsSync(dir)) return history;
  const folded = new Set(history.runs);
  const names = (await readdir(dir)).filter(
    (n) => n.endsWith('.json') && !n.startsWith('.') && !folded.has(n.slice(0, -5)),
  );
  const runs: RunSeen[] = [];
  for (const name of names) {
    const parsed = ManifestSchema.safeParse(await readRunManifestFile(join(dir, name)));
    if (parsed.success)
      runs.push({ runId: parsed.data.runId, at: parsed.data.upperBound, streams: parsed.data.schema.streams });
  }
  for (const run of runs.sort((a, b) => a.at.localeCompare(b.at))) history = foldRun(history, run);
  return history;
}

export async function writeSchemaHistory(outDir: string, history: SchemaHistory): Promise<void> {
  await writeJsonAtomic(schemaHistoryPath(outDir), snakeKeys(history, HISTORY_KEYS), { dirMode: LAKE_DIR_MODE });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
