/**
 * Every value the output directory holds, decoded: Parquet and DuckDB files compress their data, so a
 * byte search of them proves nothing; their values are read back through DuckDB (each column cast to
 * text, nested values included) and searched as text. Any other file is searched as it is.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, quotedIdentifier } from '@duckdb/node-api';
import { withLakeConnection } from '../../src/lake/index.js';

export interface Hit {
  file: string;
  needle: string;
  /** Where in the file: a table and column, or a line number. */
  where: string;
}

export interface SearchResult {
  hits: Hit[];
  /** Files searched, by how they were read. */
  files: { parquet: number; duckdb: number; text: number };
  /** Values (or text lines) searched. */
  values: number;
}

const lower = (s: string) => s.toLowerCase();

/**
 * Searches every file under `dir` (temporary and hidden ones included) for each needle, case-insensitively;
 * and, with `together`, for rows (or lines) holding every one of those values at once (a first and last
 * name pair, which alone would match other people; hit as `first+last`). `together` is one such group or a
 * list of them: many people are searched in one pass over the output (a pass decodes every file, about a
 * second for a small run's output).
 */
export async function searchOutput(
  dir: string,
  needles: string[],
  together: string[] | string[][] = [],
): Promise<SearchResult> {
  const result: SearchResult = { hits: [], files: { parquet: 0, duckdb: 0, text: 0 }, values: 0 };
  const wanted = needles.filter(Boolean).map(lower);
  const groups = (together.length && Array.isArray(together[0]) ? together : [together]) as string[][];
  const pairs = groups.filter((g) => g.length).map((g) => ({ values: g.map(lower), name: g.join('+') }));
  const names = readdirSync(dir, { recursive: true }).map(String).sort();
  for (const name of names) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const found = (where: string, text: string) => {
      const t = lower(text);
      for (const n of wanted) {
        if (t.includes(n) && !result.hits.some((h) => h.file === name && h.needle === n && h.where === where))
          result.hits.push({ file: name, needle: n, where });
      }
    };
    const row = (where: string, values: string[]) => {
      if (!pairs.length) return;
      const have = new Set(values.map(lower));
      for (const pair of pairs)
        if (
          pair.values.every((p) => have.has(p)) &&
          !result.hits.some((h) => h.file === name && h.needle === pair.name)
        )
          result.hits.push({ file: name, needle: pair.name, where });
    };
    if (name.endsWith('.parquet')) {
      result.files.parquet += 1;
      await parquetValues(path, (column, value) => (result.values++, found(column, value)), row).catch((err: Error) =>
        found('(unreadable)', readFileSync(path, 'latin1') + err.message),
      );
    } else if (/\.duckdb$/.test(name)) {
      result.files.duckdb += 1;
      await duckdbValues(path, (where, value) => (result.values++, found(where, value)), row);
    } else {
      result.files.text += 1;
      const bytes = readFileSync(path);
      // Text line by line; anything binary (a DuckDB WAL, a spill) byte by byte as well.
      bytes
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          result.values++;
          found(`line ${i + 1}`, line);
          row(`line ${i + 1}`, line.match(/"(?:[^"\\]|\\.)*"/g)?.map((q) => q.slice(1, -1)) ?? []);
        });
      if (bytes.includes(0)) found('(bytes)', bytes.toString('latin1'));
    }
  }
  return result;
}

type RowSink = (where: string, values: string[]) => void;

async function parquetValues(
  path: string,
  each: (column: string, value: string) => void,
  rowOf: RowSink,
): Promise<void> {
  await withLakeConnection(async (c) => {
    const r = await c.runAndReadAll('SELECT CAST(COLUMNS(*) AS VARCHAR) FROM read_parquet($f)', { f: path });
    const names = r.columnNames();
    r.getRows().forEach((row, n) => {
      row.forEach((v, i) => v !== null && each(names[i], String(v)));
      rowOf(`row ${n + 1}`, row.filter((v) => v !== null).map(String));
    });
  });
}

async function duckdbValues(path: string, each: (where: string, value: string) => void, rowOf: RowSink): Promise<void> {
  const db = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  try {
    const tables = (await c.runAndReadAll(`SELECT schema_name, table_name FROM duckdb_tables()`)).getRows();
    for (const [schema, table] of tables) {
      const r = await c.runAndReadAll(
        `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ${quotedIdentifier(String(schema))}.${quotedIdentifier(String(table))}`,
      );
      const names = r.columnNames();
      r.getRows().forEach((row, n) => {
        row.forEach((v, i) => v !== null && each(`${String(table)}.${names[i]}`, String(v)));
        rowOf(`${String(table)} row ${n + 1}`, row.filter((v) => v !== null).map(String));
      });
    }
    // Views read the lake (searched file by file); their definitions are text.
    for (const [name, sql] of (
      await c.runAndReadAll(`SELECT view_name, sql FROM duckdb_views() WHERE NOT internal`)
    ).getRows())
      each(`view ${String(name)}`, String(sql));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}
