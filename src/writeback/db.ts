/** One in-memory DuckDB per write-back run (guide example 8), in UTC so timestamps print the same everywhere. */
import { DuckDBInstance, quotedString, type DuckDBConnection } from '../shared/duckdb.js';
import { literalPath } from '../lake/index.js';

export interface Db {
  conn: DuckDBConnection;
  /** Rows as JSON-safe objects (BIGINT and DECIMAL as strings). */
  all(sql: string, values?: Record<string, string | number | boolean | null>): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openDb(): Promise<Db> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  return {
    conn,
    async all(sql, values) {
      const reader = await conn.runAndReadAll(sql, values);
      return reader.getRowObjectsJson();
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** A list of file paths as a SQL literal, for table functions (quoted by the library). */
export function fileList(paths: string[]): string {
  return `[${paths.map((p) => quotedString(literalPath(p))).join(', ')}]`;
}

/** A TIMESTAMPTZ column as ISO 8601 UTC with milliseconds. */
export function isoOf(column: string): string {
  return `strftime(timezone('UTC', ${column}), '%Y-%m-%dT%H:%M:%S.%gZ')`;
}
