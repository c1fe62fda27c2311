/**
 * Which users a windowed stream marks active for the per-user streams: a user whose records in a
 * window are new, or changed (e.g. a refund) since the window was last landed. Re-reading the
 * lookback days therefore marks only the users something happened to, not everyone with an order.
 */
import { LIST, listValue, VARCHAR } from '../../shared/duckdb.js';
import { dirname } from 'node:path';
import { dayFiles, inTurn, lakeColumns, scanSql, sqlType, withLakeConnection } from '../../lake/index.js';
import type { WindowedStream } from '../../../pipelines/index.js';

/** DuckDB's words for a file that is not (or no longer) a whole Parquet file. */
const UNREADABLE = /No magic bytes|not a parquet file|Invalid Input Error|Corrupt|truncated/i;

/** key → compared values, of the partition as it is in the lake now (empty when never landed or unreadable). */
export async function landedValues(
  outDir: string,
  def: WindowedStream,
  partition: Record<string, string>,
): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  const activity = def.activity;
  if (!activity) return values;
  // The day's own file or folder, or (a compacted month) the month file filtered to the day.
  const first = dayFiles(outDir, def.name, partition).files;
  if (!first.length) return values;
  const key = def.key[0];
  const columns = activity.compare.map((c) => `CAST(${JSON.stringify(c)} AS VARCHAR)`).join(', ');
  try {
    // In the month folder's turn, and looked up again there: another window's merge may have switched the
    // month file for its next generation meanwhile (src/lake/file-turns.ts).
    const read = async () => {
      const { files, dayColumn, day } = dayFiles(outDir, def.name, partition);
      if (!files.length) return;
      await withLakeConnection(async (c) => {
        const where = dayColumn ? ` WHERE ${JSON.stringify(dayColumn)} = CAST($day AS DATE)` : '';
        const reader = await c.runAndReadAll(
          `SELECT CAST(${JSON.stringify(key)} AS VARCHAR) AS k, ` +
            `to_json([${columns}])::VARCHAR AS v FROM ${scanSql('$files', { hive: false, unionByName: false })}${where}`,
          { files: listValue(files), ...(dayColumn ? { day: day! } : {}) },
          { files: LIST(VARCHAR) },
        );
        const rows = reader.getRowObjectsJS() as { k: string | null; v: string | null }[];
        for (const row of rows) values.set(String(row.k), String(row.v));
      });
    };
    await inTurn(dirname(first[0]), read);
  } catch (err) {
    // A damaged file (disk fault, a copy cut short): the window is about to be replaced whole, so its
    // old rows only served to tell changes apart. Every record counts as new and the file is healed.
    if (!UNREADABLE.test((err as Error).message)) throw err;
    values.clear();
  }
  return values;
}

/** The same encoding for a record that has just arrived: values as DuckDB prints their lake type. */
export function valueEncoder(def: WindowedStream): (record: Record<string, unknown>) => string {
  const types = new Map(lakeColumns(def.record, def.columns).map((c) => [c.name, sqlType(c.type)]));
  const compare = def.activity?.compare ?? [];
  return (record) =>
    JSON.stringify(
      compare.map((c) => {
        const v = record[c] as string | number | boolean | null | undefined;
        if (v === null || v === undefined) return null;
        return typeof v === 'number' && types.get(c)?.startsWith('DECIMAL') ? v.toFixed(2) : String(v);
      }),
    );
}

/** A key as `landedValues` holds it (text) back to its lake type: BIGINT keys as numbers. */
export function keyDecoder(def: WindowedStream): (key: string) => unknown {
  const type = lakeColumns(def.record, def.columns).find((c) => c.name === def.key[0])?.type;
  return sqlType(type!) === 'BIGINT' ? Number : (k) => k;
}
