/** Shared by the compaction tests: lakes from the sandbox, in today's and the legacy layout, read back. */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { quotedString } from '@duckdb/node-api';
import { withLakeConnection } from '../../src/lake/index.js';
import { lakeOrders } from '../extract/helpers.js';

export { lakeOrders };

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

/** Rewrites a lake's orders in the layout before month folders: `order_date=D/part-0.parquet`, the day in the path only. */
export async function toLegacyLayout(outDir: string): Promise<void> {
  const dir = join(outDir, 'lake', 'orders');
  const staging = join(outDir, 'legacy-orders');
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

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `node bin/perks.mjs <args>` as a child, with `env` added to this process's (PERKS_NOW is pinned by vitest). */
export function perks(args: string[], env: Record<string, string>): Promise<ChildResult> {
  const root = join(import.meta.dirname, '..', '..');
  const child = spawn(process.execPath, [join(root, 'bin/perks.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.once('exit', (code, signal) => done({ code, signal, stdout, stderr })));
}
