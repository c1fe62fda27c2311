/**
 * Lake column types, derived from a resource's zod declaration (never from the data),
 * so an empty page, a null-only column or a new API value cannot change a file's schema.
 */
import { quotedIdentifier } from '../shared/duckdb.js';
import { z } from 'zod';
import { lakeType } from '../resources/codecs.js';
import { LakeSchemaError } from './errors.js';

/** A column's type as a tree: the writer walks it to keep only declared keys. */
export type LakeType =
  { kind: 'scalar'; sql: string } | { kind: 'list'; item: LakeType } | { kind: 'struct'; fields: Column[] };

export interface Column {
  name: string;
  type: LakeType;
}

const scalar = (sql: string): LakeType => ({ kind: 'scalar', sql });

/** The DuckDB type text of a column type, identifiers quoted by the library. */
export function sqlType(type: LakeType): string {
  if (type.kind === 'scalar') return type.sql;
  if (type.kind === 'list') return `${sqlType(type.item)}[]`;
  return `STRUCT(${type.fields.map((f) => `${quotedIdentifier(f.name)} ${sqlType(f.type)}`).join(', ')})`;
}

/**
 * The columns of an object schema, in declaration order, then `extra` (name → DuckDB type) for
 * values the pipeline adds itself (e.g. credit's `user_id`, redemption_stats' `window_end`).
 * Loose objects contribute their declared keys only: unknown keys are not columns.
 */
export function lakeColumns(schema: z.ZodObject, extra: Record<string, string> = {}): Column[] {
  const columns = objectFields(schema, '');
  for (const [name, sql] of Object.entries(extra)) {
    if (columns.some((c) => c.name === name)) throw new LakeSchemaError(`extra column "${name}" is already declared`);
    columns.push({ name, type: scalar(sql) });
  }
  return columns;
}

function objectFields(schema: z.ZodObject, path: string): Column[] {
  return Object.entries(schema.shape).map(([name, field]) => ({
    name,
    type: typeOf(field as z.ZodType, path ? `${path}.${name}` : name),
  }));
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);
const INT_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

/** One schema node's column type; `path` names the field in errors. */
function typeOf(schema: z.ZodType, path: string): LakeType {
  const hint = lakeType.get(schema);
  if (hint) return scalar(hint.duckdb);
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  if (WRAPPERS.has(def.type)) return typeOf(def.innerType as z.ZodType, path);
  switch (def.type) {
    case 'pipe': {
      // Codecs and pipes land their output; a bare transform's output is unknown, so use the input.
      const out = def.out as z.ZodType;
      return typeOf(out._zod.def.type === 'transform' ? (def.in as z.ZodType) : out, path);
    }
    case 'string':
    case 'enum':
      return scalar('VARCHAR');
    case 'number':
      return scalar(INT_FORMATS.has(String(def.format)) ? 'BIGINT' : 'DOUBLE');
    case 'bigint':
      return scalar('BIGINT');
    case 'boolean':
      return scalar('BOOLEAN');
    case 'record':
      return scalar('JSON');
    case 'literal':
      return literalType(def.values as unknown[], path);
    case 'array':
      return { kind: 'list', item: typeOf(def.element as z.ZodType, `${path}[]`) };
    case 'object':
      return { kind: 'struct', fields: objectFields(schema as z.ZodObject, path) };
    case 'union':
      return unionType(def.options as z.ZodType[], path);
    default:
      throw new LakeSchemaError(`no lake type for "${path}" (zod ${def.type}): register one with lakeType`);
  }
}

function literalType(values: unknown[], path: string): LakeType {
  if (values.every((v) => typeof v === 'string')) return scalar('VARCHAR');
  if (values.every((v) => typeof v === 'boolean')) return scalar('BOOLEAN');
  if (values.every((v) => typeof v === 'number' && Number.isInteger(v))) return scalar('BIGINT');
  throw new LakeSchemaError(`no lake type for the literal(s) at "${path}"`);
}

/** A union lands only when every option has the same column type. */
function unionType(options: z.ZodType[], path: string): LakeType {
  const types = options.map((o) => typeOf(o, path));
  const first = sqlType(types[0]);
  if (types.every((t) => sqlType(t) === first)) return types[0];
  throw new LakeSchemaError(`no lake type for the union at "${path}" (${types.map(sqlType).join(' | ')})`);
}
