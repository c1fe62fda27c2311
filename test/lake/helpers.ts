/**
 * Shared by the lake tests: a DuckDB read of a stream (their output directories: tempOut, test/support/scratch.ts;
 * what a write left: filesUnder, test/support/files.ts).
 */
import { join } from 'node:path';
import { withLakeConnection } from '../../src/lake/index.js';

/** The stream as analysts read it. */
export async function readStream(outDir: string, stream: string, orderBy: string) {
  return withLakeConnection(async (c) => {
    const reader = await c.runAndReadAll(
      `SELECT * FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) ORDER BY ${orderBy}`,
      { glob: join(outDir, 'lake', stream, '**', '*.parquet') },
    );
    const types = Object.fromEntries(reader.columnNames().map((n, i) => [n, reader.columnTypes()[i].toString()]));
    return { rows: reader.getRowObjectsJson(), types };
  });
}

export const ROOT = join(import.meta.dirname, '..', '..');
