/**
 * Turns records into NDJSON lines for the lake's reader, and counts the keys that are not columns
 * (nested structs too), so drift in the API is visible without reaching the lake.
 *
 * A record is written whole: DuckDB's read_json with explicit columns takes the declared keys and
 * ignores the others (at every level), so copying each record down to its columns first would only
 * cost an allocation per record and object for the same lake (the land bench: 1.6–2.2 s less per 1 M orders).
 */
import type { Column, LakeType } from './columns.js';

type Count = (value: unknown, unknown: Map<string, number>) => void;

/** Per record: the line the lake reads, and how many records carried each unknown key path. */
export class RecordProjector {
  readonly unknownFields = new Map<string, number>();
  private readonly count: Count;

  /** `known` names top-level keys that are not columns but not news either (the partition keys). */
  constructor(columns: readonly Column[], known: readonly string[] = []) {
    this.count = structCounter(columns, '', known);
  }

  /** One NDJSON line (with its newline) for a record. */
  line(record: object): string {
    this.count(record, this.unknownFields);
    const json = JSON.stringify(record);
    return `${json.includes('\\ud') || json.includes('\\uD') ? replaceLoneSurrogates(json) : json}\n`;
  }
}

/**
 * JSON.stringify writes a lone UTF-16 surrogate (a cut emoji) as an escape such as \ud83d, which
 * DuckDB's JSON reader refuses, failing the whole partition; such a character becomes U+FFFD.
 * Paired surrogates are written as characters, so every escaped one is lone; an even run of
 * backslashes before "u" is an escaped backslash, not an escape.
 */
function replaceLoneSurrogates(json: string): string {
  return json.replace(/(\\+)u[dD][89a-fA-F][0-9a-fA-F]{2}/g, (match, slashes: string) =>
    slashes.length % 2 === 1 ? `${slashes.slice(1)}\\ufffd` : match,
  );
}

function counterFor(type: LakeType, path: string): Count | undefined {
  if (type.kind === 'struct') return structCounter(type.fields, path);
  if (type.kind === 'list') {
    const item = counterFor(type.item, `${path}[]`);
    return item && ((value, unknown) => Array.isArray(value) && value.forEach((v) => item(v, unknown)));
  }
  return undefined; // scalars and JSON land as they are
}

function structCounter(fields: readonly Column[], path: string, known: readonly string[] = []): Count {
  const prefix = path ? `${path}.` : '';
  const declared = new Set([...fields.map((f) => f.name), ...known]);
  const nested = fields.flatMap((f) => {
    const count = counterFor(f.type, `${prefix}${f.name}`);
    return count ? [{ name: f.name, count }] : [];
  });
  return (value, unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    const record = value as Record<string, unknown>;
    for (const { name, count } of nested) {
      const v = record[name];
      if (v !== undefined && v !== null) count(v, unknown);
    }
    for (const key in record) {
      if (!declared.has(key)) {
        const at = `${prefix}${key}`;
        unknown.set(at, (unknown.get(at) ?? 0) + 1);
      }
    }
  };
}
