/**
 * `perks sql`: ad-hoc, read-only SQL against <out>/warehouse.duckdb, printed as a table, CSV or JSON, or
 * written typed as an Arrow IPC stream or a Parquet file (to stdout or --out FILE) for pandas, Polars, R, DuckDB.
 */
import type { Json } from '@duckdb/node-api';
import type { CommandModule } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError } from '../shared/exit-codes.js';
import { writeFile } from 'node:fs/promises';
import { exportQuery, queryWarehouse, type QueryResult } from '../transform/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, type OutputFlags } from './options.js';

const TEXT_FORMATS = ['table', 'csv', 'json'] as const;
const FORMATS = [...TEXT_FORMATS, 'arrow', 'parquet'] as const;
type Format = (typeof FORMATS)[number];
type TextFormat = (typeof TEXT_FORMATS)[number];

interface SqlFlags extends OutputFlags {
  query?: string;
  format?: string;
  out?: string;
  'read-files-anywhere'?: boolean;
}

export const sqlCommand: CommandModule<object, SqlFlags> = {
  command: 'sql <query>',
  describe: 'Run read-only SQL against the warehouse (models, marts and lake_<stream> views)',
  builder: (y) =>
    y
      .positional('query', {
        type: 'string',
        describe: 'the SQL to run, one statement, e.g. "SELECT * FROM revenue_monthly"; - reads it from stdin',
      })
      .option('format', {
        alias: 'f',
        type: 'string',
        describe: `output format: ${FORMATS.join(', ')}`,
        default: 'table',
      })
      .option('out', { type: 'string', describe: 'write the result to this file instead of stdout' })
      .option('read-files-anywhere', {
        type: 'boolean',
        describe:
          'let the query read files outside the output directory (read_csv, read_text, glob…); by default it reads only there',
      })
      .example(
        '$0 sql "SELECT month, order_currency, sum(group_revenue) FROM revenue_monthly WHERE is_recognised AND NOT is_test_group GROUP BY ALL ORDER BY ALL"',
        'recognised revenue by month, test groups left out, as the report counts them',
      )
      .example('$0 sql "FROM engagement_users LIMIT 5" --format json', 'five users as JSON')
      .example(
        '$0 sql "FROM revenue_monthly" --format arrow | python -c "import pyarrow as pa, sys; print(pa.ipc.open_stream(sys.stdin.buffer).read_pandas())"',
        'typed results into pandas',
      )
      .example(
        '$0 sql "FROM revenue_monthly" --format parquet --out revenue.parquet',
        'a Parquet file for Polars, R or DuckDB',
      ),
  handler: (argv) =>
    handle(async () => {
      const format = argv.format as Format;
      if (!FORMATS.includes(format))
        throw new ConfigError(`--format=${JSON.stringify(argv.format)} is invalid: expected ${FORMATS.join(', ')}`);
      if (argv.out !== undefined && argv.out.trim() === '')
        throw new ConfigError('--out is empty: give the file to write, e.g. --out result.parquet');
      if ((format === 'arrow' || format === 'parquet') && argv.out === undefined && process.stdout.isTTY) {
        throw new ConfigError(
          `--format=${format} writes binary data: give --out FILE, or pipe stdout into the program that reads it`,
        );
      }
      configFromFlags(argv); // the settings checked, as every command checks them (a bad one: exit 2)
      const warehouse = outputOf(argv).warehouse;
      // `-`: the query from stdin (a file of SQL, a heredoc), so that quotes need no shell escaping
      const fromStdin = queryIsStdin(argv.query);
      const query = fromStdin ? await readStdin() : (argv.query ?? '');
      if (fromStdin && query.trim() === '')
        throw new ConfigError(
          'stdin (`-`) held no query: pipe one SQL statement into it, e.g. `perks sql - < query.sql`',
        );
      if (format === 'arrow' || format === 'parquet') {
        const rows = await exportQuery(
          warehouse,
          query,
          format,
          { file: argv.out, stdout: process.stdout },
          { filesAnywhere: argv['read-files-anywhere'] },
        );
        if (argv.out !== undefined)
          process.stdout.write(`${rows} row${rows === 1 ? '' : 's'} written to ${argv.out} (${format})\n`);
        return;
      }
      const text = render(
        await queryWarehouse(warehouse, query, { filesAnywhere: argv['read-files-anywhere'] }),
        format,
      );
      if (argv.out === undefined) process.stdout.write(text);
      else
        await writeFile(argv.out, text).catch((err: NodeJS.ErrnoException) => {
          throw new ConfigError(`cannot write ${argv.out}: ${err.code ?? err.message}; choose another --out`);
        });
    }),
};

/** The flags of `perks sql` that take a value (a lone `-` after one is that value, not the query). */
const VALUE_FLAGS = new Set(['--out', '--format', '-f', '--output', '-o']);

/**
 * Whether the query is `-` (stdin). yargs hands a lone `-` to a positional as an empty string (it reads the
 * positional as `--query -`, and `-` as a flag), so the command line itself is looked at.
 */
function queryIsStdin(query: unknown, args: readonly string[] = hideBin(process.argv)): boolean {
  if (query === '-') return true;
  if (query !== '' && query !== true) return false;
  return args.some((a, i) => a === '-' && !VALUE_FLAGS.has(args[i - 1] ?? ''));
}

/** All of stdin, as text (UTF-8). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const text = (v: Json | undefined): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** DuckDB's whole-number types: written to JSON as numbers, every digit kept (a BIGINT beyond 2^53 too). */
const INTEGER = /^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/;

/**
 * An array of objects, as JSON.stringify(rows, null, 2) would write it, but whole-number columns as JSON
 * numbers (DuckDB hands them over as strings to keep every digit). Decimals stay exact strings: a JSON
 * reader would turn 0.10 into a binary float.
 */
function renderJson(result: QueryResult): string {
  const integer = new Set(result.columns.filter((_, i) => INTEGER.test(result.types[i] ?? '')));
  const keys = [...new Set(result.columns)];
  const value = (c: string, v: Json | undefined) =>
    integer.has(c) && typeof v === 'string' && /^-?\d+$/.test(v)
      ? v
      : JSON.stringify(v ?? null, null, 2).replaceAll('\n', '\n    ');
  const rows = result.rows.map(
    (r) => `  {\n${keys.map((c) => `    ${JSON.stringify(c)}: ${value(c, r[c])}`).join(',\n')}\n  }`,
  );
  return rows.length ? `[\n${rows.join(',\n')}\n]\n` : '[]\n';
}

export function render(result: QueryResult, format: TextFormat): string {
  if (format === 'json') return renderJson(result);
  if (format === 'csv') {
    const cell = (v: Json | undefined) => {
      const s = text(v);
      return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    };
    return (
      [
        result.columns.map(cell).join(','),
        ...result.rows.map((r) => result.columns.map((c) => cell(r[c])).join(',')),
      ].join('\n') + '\n'
    );
  }
  const cells = result.rows.map((r) => result.columns.map((c) => text(r[c])));
  const widths = result.columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  const out = [line(result.columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)];
  out.push(`(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`);
  return `${out.join('\n')}\n`;
}
