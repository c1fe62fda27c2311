/** Shared by the compaction tests: lakes from the sandbox, in today's and the legacy layout, read back. */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { quotedString } from '@duckdb/node-api';
import { withLakeConnection } from '../../src/lake/index.js';

/** Committed Parquet files of a stream, relative to its folder, sorted. */
export function filesOf(outDir: string, stream: string): string[] {
  try {
    return readdirSync(join(outDir, 'lake', stream), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet') && !f.split('/').at(-1)!.startsWith('.'))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The layout of `files` (filesOf): each name without its version, a month file's generation as `g*`. A file
 * rewritten in place of another has a new name (file-names.ts) but the same place in the layout.
 */
export function layoutOf(files: string[]): string[] {
  return files
    .map((f) => f.replace(/\.v[0-9a-f]+\.parquet$/, '.parquet').replace(/\.g\d+\.parquet$/, '.g*.parquet'))
    .sort();
}

/**
 * Rewrites a lake's orders (or order history) in the layout before month folders: `order_date=D/part-0.parquet`,
 * the day in the path only.
 */
export async function toLegacyLayout(outDir: string, stream: 'orders' | 'order_versions' = 'orders'): Promise<void> {
  const dir = join(outDir, 'lake', stream);
  const staging = join(outDir, `legacy-${stream}`);
  await withLakeConnection(async (c) => {
    await c.run(
      `COPY (SELECT * EXCLUDE (order_month) FROM read_parquet(${quotedString(join(dir, '**', '*.parquet'))}, hive_partitioning = true, union_by_name = true))
       TO ${quotedString(staging)} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (organisation_group_id, order_date), FILENAME_PATTERN 'part-{i}')`,
    );
  });
  rmSync(dir, { recursive: true, force: true });
  const { renameSync } = await import('node:fs');
  renameSync(staging, dir);
}

/** Totals a BI query would show: rows, distinct keys, revenue. */
export async function orderTotals(outDir: string): Promise<{ rows: number; keys: number; revenue: string }> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT count(*)::BIGINT AS n, count(DISTINCT (organisation_group_id, order_id))::BIGINT AS k, sum(group_revenue)::VARCHAR AS rev
       FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)`,
      { glob: join(outDir, 'lake', 'orders', '**', '*.parquet') },
    );
    const row = r.getRowObjectsJS()[0] as { n: bigint; k: bigint; rev: string | null };
    return { rows: Number(row.n), keys: Number(row.k), revenue: String(row.rev) };
  });
}
