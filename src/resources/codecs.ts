/**
 * Wire codecs: each one decodes what real APIs send (tolerantly) and encodes the
 * canonical wire form, so the client decodes and the sandbox encodes with the
 * same schema. Each codec also names its lake (DuckDB) column type.
 */
import { z } from 'zod';

/** Column type hints for the lake, attached to schemas that zod alone cannot type. */
export const lakeType = z.registry<{ duckdb: string }>();

const decimalText = /^\s*-?\d+(\.\d+)?\s*$/;

/** Money: a JSON number on the wire, tolerated as a numeric string ("12.50"). DECIMAL in the lake. */
export const money = z.codec(z.union([z.number(), z.string().regex(decimalText)]), z.number(), {
  decode: (v) => (typeof v === 'number' ? v : Number(v)),
  encode: (v) => Math.round(v * 100) / 100,
});
lakeType.add(money, { duckdb: 'DECIMAL(18,2)' });

/**
 * An amount the spec types as an integer (the single-user stats): a whole number on the wire (rounded
 * half up), read tolerantly like money in case a server sends decimals after all. DECIMAL in the lake.
 */
export const wholeMoney = z.codec(z.union([z.number(), z.string().regex(decimalText)]), z.number(), {
  decode: (v) => (typeof v === 'number' ? v : Number(v)),
  encode: (v) => Math.round(v),
});
lakeType.add(wholeMoney, { duckdb: 'DECIMAL(18,2)' });

/** Integer, tolerated as a digit string ("42"). */
export const int = z.codec(z.union([z.int(), z.string().regex(/^\s*-?\d+\s*$/)]), z.int(), {
  decode: (v) => (typeof v === 'number' ? v : Number.parseInt(v, 10)),
  encode: (v) => v,
});
lakeType.add(int, { duckdb: 'BIGINT' });

const looseBool = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(['0', '1', 'true', 'false'])]);
const toBool = (v: z.infer<typeof looseBool>) => v === true || v === 1 || v === '1' || v === 'true';

/** A boolean the API sends as 0 or 1 (Group.sandbox); true/false tolerated. */
export const bool01 = z.codec(looseBool, z.boolean(), { decode: toBool, encode: (v) => (v ? 1 : 0) });
lakeType.add(bool01, { duckdb: 'BOOLEAN' });

/** A boolean the API sends as true/false; 0/1 tolerated. */
export const bool = z.codec(looseBool, z.boolean(), { decode: toBool, encode: (v) => v });
lakeType.add(bool, { duckdb: 'BOOLEAN' });

/**
 * A timestamp: ISO 8601 or "YYYY-MM-DD HH:MM:SS" (read as UTC when it carries no zone).
 * Decoded to ISO 8601 UTC with milliseconds; TIMESTAMPTZ in the lake.
 */
export const timestamp = z.codec(
  z.string().refine((s) => !Number.isNaN(parseTimestamp(s)), { message: 'not a timestamp' }),
  z.string(),
  { decode: (s) => new Date(parseTimestamp(s)).toISOString(), encode: (s) => s },
);
lakeType.add(timestamp, { duckdb: 'TIMESTAMPTZ' });

export function parseTimestamp(s: string): number {
  const t = s.trim();
  const hasZone = /([zZ]|[+-]\d\d:?\d\d)$/.test(t);
  const iso = t.includes('T') ? t : t.replace(' ', 'T');
  return Date.parse(hasZone || !/\d\d:\d\d/.test(iso) ? iso : `${iso}Z`);
}

/** interaction_id: a string in listings and an integer in creation; decoded to a string. */
export const idString = z.codec(z.union([z.string(), z.int()]), z.string(), {
  decode: (v) => String(v),
  encode: (v) => v,
});
lakeType.add(idString, { duckdb: 'VARCHAR' });

/** Free-content objects (interaction_details, meta): kept whole, landed as JSON. */
export const freeObject = z.record(z.string(), z.unknown());
lakeType.add(freeObject, { duckdb: 'JSON' });

/** Strict calendar date YYYY-MM-DD (request bodies). */
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD');
/** "YYYY-MM-DD HH:MM:SS", the orders filter form. */
export const sqlDateTime = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'expected YYYY-MM-DD HH:MM:SS');
