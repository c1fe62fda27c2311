/**
 * `perks sql`: ad-hoc SQL against the warehouse, read-only twice over. The database is opened with
 * access_mode READ_ONLY, and statements that write (to the database or to files: COPY, EXPORT, ATTACH…)
 * are refused before they run, with one clear line.
 */
import { existsSync } from 'node:fs';
import { DuckDBInstance, StatementType } from '@duckdb/node-api';
import { firstLine, QueryError, WarehouseMissingError } from './errors.js';

export interface QueryResult {
  columns: string[];
  /** JSON-safe values: BIGINT and DECIMAL as strings, timestamps as ISO text. */
  rows: Record<string, unknown>[];
}

const READING = new Set<StatementType>([
  StatementType.SELECT,
  StatementType.EXPLAIN,
  StatementType.PRAGMA,
  StatementType.SET,
  StatementType.VARIABLE_SET,
  StatementType.CALL,
  StatementType.TRANSACTION,
]);

const refused = (what: string) =>
  new QueryError(`the warehouse is read-only here: ${what} is refused (\`perks build\` rebuilds it; query it with SELECT)`);

/** DuckDB's own refusal (the database is READ_ONLY) or any other failure, as one line. */
function failed(err: unknown): never {
  const line = firstLine(err);
  throw /read-only/i.test(line) ? refused('a statement that writes') : new QueryError(`the query failed: ${line}`);
}

/** Runs every statement of `sql` and returns the last one's rows. */
export async function queryWarehouse(warehouse: string, sql: string): Promise<QueryResult> {
  if (!existsSync(warehouse)) throw new WarehouseMissingError(warehouse);
  const instance = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    const statements = await conn.extractStatements(sql).catch((err: unknown) => {
      throw new QueryError(`the query is not valid SQL: ${firstLine(err)}`);
    });
    if (statements.count === 0) throw new QueryError('the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"');
    // every statement is checked before any runs: "SELECT 1; DROP …" runs nothing
    const prepared = [];
    for (let i = 0; i < statements.count; i++) {
      const statement = await statements.prepare(i).catch(failed);
      if (!READING.has(statement.statementType)) throw refused(StatementType[statement.statementType]);
      prepared.push(statement);
    }
    let result: QueryResult = { columns: [], rows: [] };
    for (const statement of prepared) {
      const reader = await statement.runAndReadAll().catch(failed);
      result = { columns: reader.columnNames(), rows: reader.getRowObjectsJson() as Record<string, unknown>[] };
    }
    return result;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
