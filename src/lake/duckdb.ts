/**
 * One DuckDB instance per process, shared by everything that lands data (an in-memory
 * database: the lake itself is Parquet files). Each job takes its own connection from it.
 */
import { DuckDBInstance, type DuckDBConnection } from '../shared/duckdb.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let instance: Promise<DuckDBInstance> | undefined;

export function lakeDuckDB(): Promise<DuckDBInstance> {
  instance ??= DuckDBInstance.create(':memory:', {
    // DuckDB's spill directory defaults to ".tmp" in the working directory; keep it out of the user's way.
    temp_directory: join(tmpdir(), `perks-duckdb-${process.pid}`),
    // One worker per query: a COPY then buffers one row group at a time (peak RSS 290 MB instead of
    // 460 MB for 1,000,000 orders, bench/lake.ts) and the other core stays free for parsing pages.
    // Concurrent commits still run side by side, each on its own connection's thread.
    threads: '1',
    // DuckDB's file cache stays on (its default): no lake file is ever rewritten or replaced under the same
    // name (src/lake/file-names.ts), so a cached file's bytes are always that file's.
  });
  return instance;
}

/** Runs `work` on a fresh connection of the shared instance and closes it afterwards. */
export async function withLakeConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const connection = await (await lakeDuckDB()).connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
  }
}
