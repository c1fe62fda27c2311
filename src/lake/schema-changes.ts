/**
 * Schema changes named from the schema history (schema-history.ts): a field first seen after a stream's
 * first run (new), a field arriving as a JSON type it never had (type), a declared field no longer sent
 * (absent). A run's own changes are against the history before it; status shows the recent ones.
 * Nulls are not a type: an optional field that is null one day and a number the next has not changed.
 */
import type { JsonType } from './projector.js';
import { hadRoomFor, type Mark, type RunSeen, type SchemaHistory } from './schema-history.js';

export interface SchemaChange {
  stream: string;
  /** The field's path: `tax_amount`, `type.voucher_code`, `credits[].reason`. */
  field: string;
  kind: 'new' | 'type' | 'absent';
  /** Declared in the resource (else kept in `_extra`). */
  declared: boolean;
  /** Since when (UTC day of the run that saw it first) and that run. */
  day: string;
  run: string;
  /** new: its types; type: the types it newly arrives as. */
  types: JsonType[];
  /** type: the types it arrived as before. */
  was?: JsonType[];
  /** new, type: records (or objects) carrying it in that run. */
  records?: number;
  /** absent: the day it was last seen. */
  lastSeen?: string;
}

const valueTypes = (types: Partial<Record<JsonType, unknown>>): JsonType[] =>
  (Object.keys(types) as JsonType[]).filter((t) => t !== 'null').sort();
const later = (a: Mark, b: Mark) => a.at > b.at || (a.at === b.at && a.run > b.run);

/** What a run's records show changed against the history before it (a stream's first run is its baseline). */
export function runChanges(before: SchemaHistory, run: RunSeen): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const at = { day: run.at.slice(0, 10), run: run.runId };
  for (const [stream, seen] of Object.entries(run.streams)) {
    const history = before.streams[stream];
    if (!history || seen.records <= 0) continue;
    for (const [field, f] of Object.entries(seen.fields)) {
      const known = history.fields[field];
      if (!known) {
        changes.push({
          stream,
          field,
          kind: 'new',
          declared: f.declared,
          ...at,
          types: valueTypes(f.types),
          records: f.count,
        });
        continue;
      }
      const was = valueTypes(known.types);
      const added = valueTypes(f.types).filter((t) => !was.includes(t));
      if (was.length && added.length) {
        const records = added.reduce((n, t) => n + (f.types[t] ?? 0), 0);
        changes.push({ stream, field, kind: 'type', declared: f.declared, ...at, types: added, was, records });
      }
    }
    for (const [field, known] of Object.entries(history.fields)) {
      if (known.declared && !known.absentSince && !seen.fields[field] && hadRoomFor(field, seen))
        changes.push({ stream, field, kind: 'absent', declared: true, ...at, types: [], lastSeen: known.last.day });
    }
  }
  return changes;
}

/** The changes of the history since `fromDay` (new and type changes), and every declared field absent now. */
export function recentChanges(history: SchemaHistory, fromDay: string): SchemaChange[] {
  const changes: SchemaChange[] = [];
  for (const [stream, h] of Object.entries(history.streams)) {
    for (const [field, f] of Object.entries(h.fields)) {
      const base = { stream, field, declared: f.declared };
      if (later(f.first, h.first) && f.first.day >= fromDay) {
        const types = valueTypes(f.types).filter((t) => f.types[t]!.first.run === f.first.run);
        changes.push({ ...base, kind: 'new', day: f.first.day, run: f.first.run, types, records: f.first.count });
      }
      for (const t of valueTypes(f.types)) {
        const first = f.types[t]!.first;
        const was = valueTypes(f.types).filter((o) => later(first, f.types[o]!.first));
        if (was.length && first.day >= fromDay)
          changes.push({
            ...base,
            kind: 'type',
            day: first.day,
            run: first.run,
            types: [t],
            was,
            records: first.count,
          });
      }
      if (f.absentSince)
        changes.push({
          ...base,
          kind: 'absent',
          day: f.absentSince.day,
          run: f.absentSince.run,
          types: [],
          lastSeen: f.last.day,
        });
    }
  }
  return changes.sort((a, b) => a.stream.localeCompare(b.stream) || a.day.localeCompare(b.day));
}

/** Undeclared fields a stream's latest run carried (kept in `_extra`), per stream. */
export function undeclaredFields(history: SchemaHistory): { stream: string; field: string; types: JsonType[] }[] {
  return Object.entries(history.streams).flatMap(([stream, h]) =>
    Object.entries(h.fields)
      .filter(([, f]) => !f.declared && f.last.run === h.last.run)
      .map(([field, f]) => ({ stream, field, types: valueTypes(f.types) })),
  );
}

const records = (n: number) => `${n.toLocaleString('en-US')} record${n === 1 ? '' : 's'}`;
const typeText = (types: JsonType[]) => (types.length ? types.join(' or ') : 'null');

/** One line naming a change: which field, which stream, since when. */
export function changeLine(c: SchemaChange): string {
  const name = `${c.stream}: field \`${c.field}\``;
  const kept = c.declared ? '' : ' (undeclared: kept in _extra)';
  if (c.kind === 'new') return `${name} (${typeText(c.types)}) first seen ${c.day}, ${records(c.records ?? 0)}${kept}`;
  if (c.kind === 'type')
    return `${name} arrives as ${typeText(c.types)} since ${c.day} (was ${typeText(c.was ?? [])}), ${records(c.records ?? 0)}${kept}`;
  return `${name} absent since ${c.day} (declared; last seen ${c.lastSeen})`;
}
