/**
 * The guard of a compaction: the row count and an order-independent checksum of every row (the sum of
 * each row's hash over all its columns, taken in name order, so neither row order nor column order
 * counts). A month is switched only when its new file has the same fingerprint as the files it replaces.
 */
import { quotedIdentifier as id, type DuckDBConnection, type DuckDBValue } from '../shared/duckdb.js';

export interface Fingerprint {
  rows: number;
  checksum: string;
  columns: string[];
}

export async function fingerprint(
  c: DuckDBConnection,
  relation: string,
  params: Record<string, DuckDBValue>,
  types?: Record<string, never>,
): Promise<Fingerprint> {
  const described = await c.runAndReadAll(`DESCRIBE SELECT * FROM (${relation})`, params, types);
  const columns = (described.getRowObjectsJson() as { column_name: string }[]).map((r) => r.column_name).sort();
  const r = await c.runAndReadAll(
    `SELECT count(*)::BIGINT AS n, coalesce(sum(hash(t)), 0)::VARCHAR AS h FROM (SELECT ${columns.map((n) => id(n)).join(', ')} FROM (${relation})) t`,
    params,
    types,
  );
  const row = r.getRowObjectsJson()[0] as { n: string; h: string };
  return { rows: Number(row.n), checksum: row.h, columns };
}

export const sameFingerprint = (a: Fingerprint, b: Fingerprint) =>
  a.rows === b.rows && a.checksum === b.checksum && a.columns.join(',') === b.columns.join(',');
