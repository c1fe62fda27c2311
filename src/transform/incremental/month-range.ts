/** SQL for the rows of one month of a DATE or TIMESTAMP column, and the months a table holds. */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';

/** The month of the rows whose time column is NULL (a month file's name: export-months.ts). */
export const NO_MONTH = 'no-month';

/**
 * The months (`YYYY-MM`, sorted; NO_MONTH for rows of no time) `table` holds in `time`, any group. The distinct
 * months first, then their names: strftime on every row cost more than the rest of the query.
 */
export async function monthsHeld(conn: DuckDBConnection, table: string, time: string): Promise<string[]> {
  const present = await conn.runAndReadAll(
    `SELECT DISTINCT coalesce(strftime(m, '%Y-%m'), ${str(NO_MONTH)}) AS m
     FROM (SELECT DISTINCT date_trunc('month', ${id(time)}) AS m FROM ${id(table)})`,
  );
  return (present.getRowObjectsJson() as { m: string }[]).map((r) => r.m).sort();
}

/**
 * SQL true for the rows whose `column` (an SQL expression) falls in `month` (`YYYY-MM`): DATE literals on both
 * ends, so DuckDB pushes the range down and its zone maps skip the other months (a DATE compared with
 * DATE + INTERVAL, a TIMESTAMP, is not pushed down).
 */
export function inMonth(column: string, month: string): string {
  return inMonths(column, month, month);
}

/** SQL true for `column` (a DATE) from the first day of month `first` to the last of month `last` (`YYYY-MM`). */
export function inMonths(column: string, first: string, last: string): string {
  const [year, m] = last.split('-').map(Number);
  const to = m === 12 ? `${year + 1}-01-01` : `${year}-${String(m + 1).padStart(2, '0')}-01`;
  return `${column} >= DATE ${str(`${first}-01`)} AND ${column} < DATE ${str(to)}`;
}
