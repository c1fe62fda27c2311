/**
 * Rewrites one committed Parquet file through a SELECT over it (personal values set to NULL, for one):
 * the result is written under a temporary name beside it, fsynced and switched in for it under a new name
 * (file-names.ts, journal.ts), so a reader sees the old file or the new one and never has a file rewritten
 * under it, and a crash leaves the old one and a temporary file the next run removes.
 * Values reach the SQL only as bound parameters.
 */
import { quotedString, type DuckDBType, type DuckDBValue } from '../shared/duckdb.js';
import { chmod, rm } from 'node:fs/promises';
import { fsyncPath, tempPathFor } from '../shared/durable-file.js';
import { withLakeConnection } from './duckdb.js';
import { writingOutput } from './errors.js';
import { successorOf } from './file-names.js';
import { switchFiles } from './journal.js';
import { LAKE_FILE_MODE } from './modes.js';
import { literalPath } from './paths.js';

export interface Rewrite {
  /** The SELECT that gives the new content, over `source` (the file as it is). Same columns, same types. */
  select: (source: string) => string;
  params?: Record<string, DuckDBValue>;
  types?: Record<string, DuckDBType>;
}

/**
 * The parameters and types of those that `sql` names: DuckDB refuses a parameter a statement does not use,
 * and the same values serve several statements.
 */
export function usedParameters<V, T>(sql: string, params: Record<string, V>, types: Record<string, T> = {}) {
  const used = <X>(o: Record<string, X>) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => new RegExp(`\\$${k}\\b`).test(sql)));
  return [used(params), used(types)] as const;
}

/** Rewrites `path`, a file of `stream` under `outDir`'s lake; resolves with the new file's path. */
export async function rewriteParquet(outDir: string, stream: string, path: string, rewrite: Rewrite): Promise<string> {
  const target = successorOf(path);
  const temp = tempPathFor(target);
  try {
    await writingOutput('a lake file', path, async () => {
      const sql = `COPY (${rewrite.select('read_parquet($file, hive_partitioning = false)')}) TO ${quotedString(temp)} (FORMAT parquet, COMPRESSION zstd)`;
      const [params, types] = usedParameters(sql, { ...rewrite.params, file: literalPath(path) }, rewrite.types);
      await withLakeConnection((c) => c.run(sql, params, types));
      await chmod(temp, LAKE_FILE_MODE); // DuckDB's file follows the umask
      await fsyncPath(temp);
      await switchFiles(outDir, { stream, temp, target, inputs: [path] });
    });
    return target;
  } finally {
    await rm(temp, { force: true });
  }
}
