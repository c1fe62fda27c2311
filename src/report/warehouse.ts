/**
 * The warehouse, opened read-only: the report never changes it, and a reader of a read-only file does
 * not stand in the way of the next build (which builds a new file and swaps it in).
 * Rows come back JSON-safe: DECIMAL and BIGINT as strings, DATE as "YYYY-MM-DD".
 */
import { existsSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '../shared/duckdb.js';
import { outputAt } from '../output/index.js';
import { ReportInputError } from './errors.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

export type Row = Record<string, string | number | boolean | null>;
export type Params = Record<string, DuckDBValue>;

export interface Warehouse {
  readonly path: string;
  readonly tables: ReadonlySet<string>;
  all(sql: string, params?: Params): Promise<Row[]>;
  close(): void;
}

/** Tables (or views) the report reads. */
export const REQUIRED_TABLES = ['revenue_monthly', 'stg_orders'] as const;

export async function openWarehouse(outDir: string): Promise<Warehouse> {
  const path = outputAt(outDir).warehouse;
  if (!existsSync(path))
    throw new ReportInputError(`no warehouse at ${path}: run \`perks build\` (or \`perks run\`) first`);
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  } catch (err) {
    // A damaged warehouse is the data's fault, not the input's: exit 1, as in every command.
    throw new UserFacingError(
      `cannot open the warehouse ${path} read-only: ${firstLine(err)}; rebuild it with \`perks build\``,
      ExitCode.failed,
    );
  }
  const connection: DuckDBConnection = await instance.connect();
  const all = async (sql: string, params?: Params): Promise<Row[]> =>
    (await connection.runAndReadAll(sql, params)).getRowObjectsJson() as Row[];
  const names = await all(
    `SELECT DISTINCT table_name AS name FROM information_schema.tables WHERE table_schema = 'main'`,
  );
  const tables = new Set(names.map((r) => String(r.name)));
  const close = () => {
    connection.closeSync();
    instance.closeSync();
  };
  const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
  if (missing.length > 0) {
    close();
    throw new ReportInputError(`the warehouse ${path} has no ${missing.join(', ')}: rebuild it with \`perks build\``);
  }
  return { path, tables, all, close };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
