/** The marts as readers see them: every mart's rows as sorted text, and a reader loop that checks them. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { listValue } from '@duckdb/node-api';
import { withLakeConnection } from '../../src/lake/index.js';
import { repeat } from './random.js';

/**
 * mart file (`<mart>.parquet`) or month folder (`<mart>/`, its month files together) → its rows as JSON,
 * sorted, as one string; without the `ignore` columns.
 */
export async function martRows(out: string, ignore: readonly string[] = []): Promise<Record<string, string>> {
  const columns = ignore.length
    ? `COLUMNS(c -> c NOT IN (${ignore.map((c) => `'${c.replaceAll("'", "''")}'`).join(', ')}))`
    : '*';
  const dir = join(out, 'marts');
  const result: Record<string, string> = {};
  await withLakeConnection(async (c) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const files = entry.isDirectory()
        ? readdirSync(join(dir, entry.name))
            .filter((n) => n.endsWith('.parquet'))
            .map((n) => join(dir, entry.name, n))
        : entry.name.endsWith('.parquet')
          ? [join(dir, entry.name)]
          : [];
      if (!files.length) continue;
      const r = await c.runAndReadAll(
        `SELECT to_json(t)::VARCHAR AS j FROM (SELECT ${columns} FROM read_parquet($f)) t ORDER BY 1`,
        {
          f: listValue(files),
        },
      );
      result[entry.isDirectory() ? `${entry.name}/` : entry.name] = JSON.stringify(r.getRowObjectsJS().map((x) => x.j));
    }
  });
  return result;
}

export interface MartReads {
  reads: number;
  errors: number;
  torn: number;
  problems: string[];
}

/** Reads every mart over and over while builds run and die: each read must give the marts whole. */
export function startMartsReader(
  out: string,
  expected: Record<string, string>,
  everyMs = 100,
): { stop(): Promise<MartReads> } {
  const tally: MartReads = { reads: 0, errors: 0, torn: 0, problems: [] };
  const loop = repeat(everyMs, async () => {
    tally.reads += 1;
    try {
      const now = await martRows(out);
      for (const [mart, rows] of Object.entries(expected)) {
        if (now[mart] !== rows) {
          tally.torn += 1;
          if (tally.problems.length < 5) tally.problems.push(`${mart} read with other rows than the build made`);
        }
      }
    } catch (err) {
      tally.errors += 1;
      if (tally.problems.length < 5) tally.problems.push(`read error: ${(err as Error).message.split('\n')[0]}`);
    }
  });
  return { stop: () => loop.stop().then(() => tally) };
}
