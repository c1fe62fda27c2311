/** Shared by the lake tests: a fresh output directory per test and a DuckDB read of a stream. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { withLakeConnection } from '../../src/lake/index.js';

const made: string[] = [];
afterEach(async () => {
  while (made.length) await rm(made.pop()!, { recursive: true, force: true });
});

export async function tempOut(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'perks-lake-test-'));
  made.push(dir);
  return dir;
}

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

/** Every file under `dir`, relative, sorted: to see exactly what a write left behind. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

export const ROOT = join(import.meta.dirname, '..', '..');
