/**
 * Two warehouses compared row for row: every table of `expected` (a full build) against the same table of
 * `actual` (an incremental build), EXCEPT ALL both ways, so a row twice on one side and once on the other
 * counts; money is DECIMAL, so equal means equal to the cent. The build's own bookkeeping (`_build_…`) is left out. Used by `perks build --verify-incremental`.
 * Each table is first compared by a fingerprint of its rows as a multiset (count, xor and sum of the rows'
 * hashes: one streaming scan a side, no memory to speak of); only a table whose fingerprints differ is
 * compared row for row, for the counts and a sample. Under `limits` (the build's memory limit, spilling into
 * a folder), so a verify of 100 M orders stays within the build's memory (unbounded, EXCEPT ALL of every
 * table reached 20 GB).
 */
import { DuckDBInstance, quotedIdentifier as id, quotedString as str } from '../../shared/duckdb.js';
import { rowDigestSql } from '../incremental/row-digest.js';

export interface Difference {
  table: string;
  /** Rows in the incremental build and not in the full one, and the reverse. */
  onlyIncremental: number;
  onlyFull: number;
  /** One such row (JSON-safe), the first side that has one. */
  sample: Record<string, unknown> | null;
}

export async function compareWarehouses(
  actual: string,
  expected: string,
  limits?: { memoryLimit: string; spillDirectory: string },
): Promise<Difference[]> {
  const db = await DuckDBInstance.create(
    ':memory:',
    limits ? { memory_limit: limits.memoryLimit, temp_directory: limits.spillDirectory } : {},
  );
  const conn = await db.connect();
  try {
    await conn.run(`ATTACH ${str(actual)} AS inc (READ_ONLY)`);
    await conn.run(`ATTACH ${str(expected)} AS full_build (READ_ONLY)`);
    const tables = async (catalog: string) =>
      (
        await conn.runAndReadAll(
          `SELECT table_name AS t FROM duckdb_tables() WHERE database_name = ${str(catalog)} AND schema_name = 'main'` +
            ` AND NOT starts_with(table_name, '_build_') ORDER BY 1`,
        )
      )
        .getRowObjectsJson()
        .map((r) => (r as { t: string }).t);
    const inFull = await tables('full_build');
    const inInc = new Set(await tables('inc'));
    const differences: Difference[] = [];
    for (const table of inFull) {
      if (!inInc.has(table)) {
        differences.push({ table, onlyIncremental: 0, onlyFull: -1, sample: null });
        continue;
      }
      const a = `inc.main.${id(table)}`;
      const b = `full_build.main.${id(table)}`;
      const fingerprint = async (x: string) =>
        JSON.stringify(
          (
            await conn.runAndReadAll(`SELECT ${rowDigestSql('t')} AS x, sum(hash(t)::HUGEINT) AS s FROM ${x} AS t`)
          ).getRowObjectsJson()[0],
        );
      if ((await fingerprint(a)) === (await fingerprint(b))) continue;
      const side = async (x: string, y: string) => {
        const rows = (
          await conn.runAndReadAll(`SELECT * FROM (SELECT * FROM ${x} EXCEPT ALL SELECT * FROM ${y}) LIMIT 1`)
        ).getRowObjectsJson();
        const n = (
          await conn.runAndReadAll(`SELECT count(*) AS n FROM (SELECT * FROM ${x} EXCEPT ALL SELECT * FROM ${y})`)
        ).getRowObjectsJson()[0].n;
        return { n: Number(n), sample: (rows[0] as Record<string, unknown> | undefined) ?? null };
      };
      const extra = await side(a, b);
      const missing = await side(b, a);
      if (extra.n || missing.n)
        differences.push({
          table,
          onlyIncremental: extra.n,
          onlyFull: missing.n,
          sample: extra.sample ?? missing.sample,
        });
    }
    for (const table of inInc)
      if (!inFull.includes(table)) differences.push({ table, onlyIncremental: -1, onlyFull: 0, sample: null });
    return differences;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** One line: the first difference, its counts and a sample row. */
export function describeDifference(d: Difference): string {
  if (d.onlyFull < 0) return `${d.table} is missing from the incremental build`;
  if (d.onlyIncremental < 0) return `${d.table} is in the incremental build only`;
  return `${d.table}: ${d.onlyIncremental} rows only in the incremental build, ${d.onlyFull} only in the full build; e.g. ${JSON.stringify(d.sample)}`;
}
