/** Shared by the scale tests and the bench: run `perks extract` as a child, and read a lake back as rows. */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { withLakeConnection } from '../../src/lake/index.js';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/perks.mjs extract …` with the given environment (added to this process's). */
export function perksExtract(args: string[], env: Record<string, string>): Promise<ChildResult> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/perks.mjs'), 'extract', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}

/**
 * Every row of a stream, all columns but the run's own (`_extracted_at`, `_run_id`), as sorted JSON
 * text: two lakes are equal when these are (keys, sums and every other value).
 */
export async function streamRows(outDir: string, stream: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT to_json(t)::VARCHAR AS j
       FROM (SELECT * EXCLUDE (_extracted_at, _run_id) FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)) t
       ORDER BY j`,
      { glob: join(outDir, 'lake', stream, '**', '*.parquet') },
    );
    return (r.getRowObjectsJS() as { j: string }[]).map((row) => row.j);
  });
}
