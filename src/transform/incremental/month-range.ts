/** SQL for the rows of one month of a DATE or TIMESTAMP column. */
import { quotedString as str } from '../../shared/duckdb.js';

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
