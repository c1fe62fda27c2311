/**
 * Turns records into NDJSON lines for the lake's reader. On the way it notes what each record carried
 * (every field path, declared or not, and its JSON type: the schema history's input) and collects the
 * keys that are not columns into the `_extra` column, so nothing the API sends is dropped.
 *
 * A record is written whole: DuckDB's read_json with explicit columns takes the declared keys and
 * ignores the others (at every level), so copying each record down to its columns first would only
 * cost an allocation per record and object for the same lake (the land bench: 1.6–2.2 s less per 1 M orders).
 * `_extra` mirrors the record's shape with only the undeclared parts: a top-level unknown at its key, an
 * unknown inside a declared struct under the struct's name (`{"type": {"novel": 1}}`), inside a list of
 * structs as a list of the same length (null for items without one). docs/dev/lake-contract.md.
 */
import type { Column, LakeType } from './columns.js';

/** The lake column holding, as JSON, what a record carried beyond its declared columns. */
export const EXTRA_COLUMN = '_extra';

export const JSON_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'null'] as const;
export type JsonType = (typeof JSON_TYPES)[number];

/** One field path as a commit's records carried it: how many carried the key, and as which JSON types. */
export interface FieldSeen {
  declared: boolean;
  count: number;
  types: Partial<Record<JsonType, number>>;
}

/** What a commit's records carried: per field path (`tax_amount`, `type.voucher_code`, `credits[].amount`). */
export type FieldsSeen = Record<string, FieldSeen>;

type Extras = Record<string, unknown>;

/** Counters of one field path; `types` indexed like JSON_TYPES. */
class Tally {
  count = 0;
  readonly types = new Array<number>(JSON_TYPES.length).fill(0);
  constructor(
    readonly path: string,
    readonly declared: boolean,
  ) {}

  add(value: unknown): void {
    this.count += 1;
    this.types[typeIndex(value)] += 1;
  }
}

const typeIndex = (v: unknown): number =>
  v === null
    ? 5
    : typeof v === 'string'
      ? 0
      : typeof v === 'number'
        ? 1
        : typeof v === 'boolean'
          ? 2
          : Array.isArray(v)
            ? 4
            : typeof v === 'object'
              ? 3
              : 0;

/** Walks one value of a column type: tallies its fields, returns its extras (undefined: none). */
type Walk = (value: unknown) => unknown;

export class RecordProjector {
  private readonly tallies: Tally[] = [];
  private readonly walk: Walk;
  private readonly extras: boolean;

  /** `known` names top-level keys that are not columns but not news either (the partition keys). */
  constructor(columns: readonly Column[], known: readonly string[] = []) {
    this.extras = columns.some((c) => c.name === EXTRA_COLUMN);
    const fields = columns.filter((c) => c.name !== EXTRA_COLUMN);
    this.walk = this.structWalker(fields, '', known);
  }

  /** Keys the records carried that are not columns (path → records carrying it). */
  get unknownFields(): Map<string, number> {
    return new Map(this.tallies.filter((t) => !t.declared && t.count).map((t) => [t.path, t.count]));
  }

  /** Every field path the records carried, with its counts. */
  fieldsSeen(): FieldsSeen {
    const out: FieldsSeen = {};
    for (const t of this.tallies) {
      if (!t.count) continue;
      const types: FieldSeen['types'] = {};
      t.types.forEach((n, i) => n && (types[JSON_TYPES[i]] = n));
      out[t.path] = { declared: t.declared, count: t.count, types };
    }
    return out;
  }

  /** One NDJSON line (with its newline) for a record. */
  line(record: object): string {
    const extra = this.walk(record) as Extras | undefined;
    let json: string;
    if (!this.extras || extra === undefined) json = JSON.stringify(record);
    else if (EXTRA_COLUMN in record) {
      // the API sent a key of that name: it is an extra like any other, kept inside the column
      json = JSON.stringify({ ...record, [EXTRA_COLUMN]: extra });
    } else {
      const whole = JSON.stringify(record);
      json = `${whole.slice(0, -1)}${whole.length > 2 ? ',' : ''}"${EXTRA_COLUMN}":${JSON.stringify(extra)}}`;
    }
    return `${json.includes('\\ud') || json.includes('\\uD') ? replaceLoneSurrogates(json) : json}\n`;
  }

  private tally(path: string, declared: boolean): Tally {
    const t = new Tally(path, declared);
    this.tallies.push(t);
    return t;
  }

  private walker(type: LakeType, path: string): Walk | undefined {
    if (type.kind === 'struct') return this.structWalker(type.fields, `${path}.`);
    if (type.kind === 'list' && type.item.kind !== 'scalar') {
      const itemPath = `${path}[]`;
      const items = this.tally(itemPath, true);
      const item = this.walker(type.item, itemPath)!;
      return (value) => {
        if (!Array.isArray(value)) return undefined;
        let extras: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          items.add(value[i]);
          const e = item(value[i]);
          if (e !== undefined) (extras ??= new Array<unknown>(value.length).fill(null))[i] = e;
        }
        return extras;
      };
    }
    return undefined; // scalars and JSON land as they are
  }

  private structWalker(fields: readonly Column[], prefix: string, known: readonly string[] = []): Walk {
    const declared = new Map<string, { tally: Tally; walk?: Walk }>();
    for (const name of known) declared.set(name, { tally: this.tally(`${prefix}${name}`, true) });
    for (const f of fields) {
      const tally = this.tally(`${prefix}${f.name}`, true);
      declared.set(f.name, { tally, walk: this.walker(f.type, `${prefix}${f.name}`) });
    }
    const unknown = new Map<string, Tally>();
    return (value) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      const record = value as Extras;
      let extras: Extras | undefined;
      for (const key in record) {
        const v = record[key];
        if (v === undefined) continue; // JSON.stringify leaves it out: not sent
        const field = declared.get(key);
        if (field) {
          field.tally.add(v);
          if (field.walk && v !== null) {
            const e = field.walk(v);
            if (e !== undefined) (extras ??= {})[key] = e;
          }
        } else {
          let t = unknown.get(key);
          if (!t) unknown.set(key, (t = this.tally(`${prefix}${key}`, false)));
          t.add(v);
          (extras ??= {})[key] = v;
        }
      }
      return extras;
    };
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
