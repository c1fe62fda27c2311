/** `perks sql`: ad-hoc, read-only SQL against <out>/warehouse.duckdb, printed as a table, CSV or JSON. */
import type { CommandModule } from 'yargs';
import { loadConfig } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { queryWarehouse, warehousePath, type QueryResult } from '../transform/index.js';
import { handle } from './handle.js';

const FORMATS = ['table', 'csv', 'json'] as const;
type Format = (typeof FORMATS)[number];

interface SqlFlags {
  query?: string;
  format?: string;
  output?: string;
  'read-files-anywhere'?: boolean;
}

export const sqlCommand: CommandModule<object, SqlFlags> = {
  command: 'sql <query>',
  describe: 'Run read-only SQL against the warehouse (models, marts and lake_<stream> views)',
  builder: (y) =>
    y
      .positional('query', { type: 'string', describe: 'the SQL to run, e.g. "SELECT * FROM revenue_monthly"' })
      .option('format', { alias: 'f', type: 'string', describe: `output format: ${FORMATS.join(', ')}`, default: 'table' })
      .option('output', { alias: 'o', type: 'string', describe: 'output directory holding warehouse.duckdb (PERKS_OUTPUT, default ./output)' })
      .option('read-files-anywhere', { type: 'boolean', describe: 'let the query read files outside the output directory (read_csv, read_text, glob…); by default it reads only there' })
      .example('$0 sql "SELECT month, order_currency, sum(group_revenue) FROM revenue_monthly GROUP BY ALL ORDER BY 1"', 'revenue by month')
      .example('$0 sql "FROM engagement_users LIMIT 5" --format json', 'five users as JSON') as never,
  handler: (argv) =>
    handle(async () => {
      const format = argv.format as Format;
      if (!FORMATS.includes(format)) throw new ConfigError(`--format=${JSON.stringify(argv.format)} is invalid: expected ${FORMATS.join(', ')}`);
      const config = loadConfig(process.env, { output: argv.output });
      const result = await queryWarehouse(warehousePath(config.output), argv.query ?? '', { filesAnywhere: argv['read-files-anywhere'] });
      process.stdout.write(render(result, format));
    }),
};

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function render(result: QueryResult, format: Format): string {
  if (format === 'json') return `${JSON.stringify(result.rows, null, 2)}\n`;
  if (format === 'csv') {
    const cell = (v: unknown) => {
      const s = text(v);
      return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    };
    return [result.columns.map(cell).join(','), ...result.rows.map((r) => result.columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
  }
  const cells = result.rows.map((r) => result.columns.map((c) => text(r[c])));
  const widths = result.columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join(' | ').trimEnd();
  const out = [line(result.columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)];
  out.push(`(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`);
  return `${out.join('\n')}\n`;
}
