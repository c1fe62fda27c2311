/**
 * Turns records into NDJSON lines that hold only the declared columns (nested structs too),
 * and counts the keys it leaves out, so drift in the API is visible without reaching the lake.
 */
import type { Column, LakeType } from './columns.js';

type Project = (value: unknown, unknown: Map<string, number>) => unknown;

/** Per record: what the lake keeps, and how many records carried each unknown key path. */
export class RecordProjector {
  readonly unknownFields = new Map<string, number>();
  private readonly project: Project;

  /** `known` names top-level keys that are not columns but not news either (the partition keys). */
  constructor(columns: readonly Column[], known: readonly string[] = []) {
    this.project = structProjector(columns, '', known);
  }

  /** One NDJSON line (with its newline) for a record. */
  line(record: object): string {
    const json = JSON.stringify(this.project(record, this.unknownFields));
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

function projectorFor(type: LakeType, path: string): Project {
  if (type.kind === 'struct') return structProjector(type.fields, path);
  if (type.kind === 'list') {
    if (type.item.kind === 'scalar') return (value) => value;
    const item = projectorFor(type.item, `${path}[]`);
    return (value, unknown) => (Array.isArray(value) ? value.map((v) => item(v, unknown)) : value);
  }
  return (value) => value; // scalars and JSON land as they are
}

function structProjector(fields: readonly Column[], path: string, known: readonly string[] = []): Project {
  const prefix = path ? `${path}.` : '';
  const declared = new Set([...fields.map((f) => f.name), ...known]);
  const parts = fields.map((f) => ({
    name: f.name,
    nested: f.type.kind === 'scalar' ? undefined : projectorFor(f.type, `${prefix}${f.name}`),
  }));
  return (value, unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const record = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const { name, nested } of parts) {
      const v = record[name];
      if (v !== undefined) out[name] = nested && v !== null ? nested(v, unknown) : v;
    }
    for (const key in record) {
      if (!declared.has(key)) {
        const at = `${prefix}${key}`;
        unknown.set(at, (unknown.get(at) ?? 0) + 1);
      }
    }
    return out;
  };
}
