/**
 * A mart built by months (`incremental: month on <group>, <time>`) exported as a folder of month files,
 * `<out>/marts/<mart>/<YYYY-MM>.parquet` (every group's rows of that month; rows of no month in
 * `no-month.parquet`; an empty mart is one file of no rows, `no-rows.parquet`), so that a build rewrites only the
 * months it replaced and BI readers and the object store
 * move only those. Each file is written under a temporary name and renamed at the swap: a reader sees a
 * month as it was or as it is, never half of one.
 *
 * Which months to write: the months the build replaced, when the folder is the one the previous warehouse
 * describes; else every month. The folder holds `_perks_build.json` (a token, written last at the swap); the
 * warehouse's state holds the same token. A build killed between the warehouse's swap and the folder's
 * leaves them with different tokens, and the next build writes every month again.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import { removeStaleTempsIn, tempPathFor, type FileChange } from './atomic-files.js';
import { inMonth, monthsHeld, NO_MONTH } from '../incremental/month-range.js';
import type { MonthFiles } from '../runner/run-models.js';

export const TOKEN_FILE = '_perks_build.json';
/** An empty mart's one file: no rows, its columns (a folder without a file has no schema to read). */
const NO_ROWS = 'no-rows';
/** The month column of a partitioned COPY (in the scratch folder's names only, not in the files). */
const PART = '_perks_month';
const MONTH_FILE = /^(\d{4}-\d{2}|no-month|no-rows)\.parquet$/;

export interface MonthFolder {
  /** The mart's time column (a DATE or TIMESTAMP). */
  time: string;
  /** The months (`YYYY-MM`) this build replaced; null: every month is new. */
  replaced: Set<string> | null;
  /** The token the warehouse this build started from recorded for the folder. */
  previousToken: string | undefined;
  /** This build's token: recorded in the new warehouse's state, and written in the folder last. */
  token: string;
  /** The months the mart holds, as the build found them once built (month-range.ts monthsHeld); absent: read. */
  months?: readonly string[];
}

/** `marts/savings_monthly/: 3 month files written, 49 kept, 0 removed`. */
export const describeMonthFiles = (name: string, f: MonthFiles): string =>
  `${name}: ${f.written} month files written, ${f.kept} kept, ${f.removed} removed`;

/** Writes the month files to rewrite under temporary names in `dir`; `changes` gets what the swap does. */
export async function stageMonthFolder(
  conn: DuckDBConnection,
  mart: string,
  dir: string,
  folder: MonthFolder,
  changes: FileChange[],
): Promise<MonthFiles> {
  mkdirSync(dir, { recursive: true });
  removeStaleTempsIn(dir);
  const names = readdirSync(dir);
  const existing = new Set(names.filter((n) => MONTH_FILE.test(n)).map((n) => n.slice(0, -'.parquet'.length)));
  const trusted =
    folder.replaced !== null && folder.previousToken !== undefined && readToken(dir) === folder.previousToken;
  const time = id(folder.time);
  // the months the build found the mart holds (its summary line counts them), else read here
  const found = folder.months ?? (await monthsHeld(conn, mart, folder.time));
  const months = found.length ? found : [NO_ROWS];
  const toWrite = months.filter((m) => !(trusted && existing.has(m) && !folder.replaced!.has(m)));
  const files: MonthFiles = { written: toWrite.length, kept: months.length - toWrite.length, removed: 0 };
  if (toWrite.length) await writeMonths(conn, mart, dir, time, toWrite, changes);
  for (const month of existing)
    if (!months.includes(month)) {
      changes.push({ remove: join(dir, `${month}.parquet`) });
      files.removed++;
    }
  // the token last: a folder that carries it holds every change before it
  const target = join(dir, TOKEN_FILE);
  const temp = tempPathFor(target);
  writeFileSync(temp, `${JSON.stringify({ token: folder.token })}\n`);
  changes.push({ temp, target });
  return files;
}

/**
 * The month files of `months`, in one pass over the mart (DuckDB's partitioned COPY into a scratch folder
 * beside them, each month's file then renamed into place at the swap): a filtered COPY per month read the
 * whole table each time (12 months of reconciliation_platform: 12.9 CPU-s, against 3.4 for its one file).
 */
async function writeMonths(
  conn: DuckDBConnection,
  mart: string,
  dir: string,
  time: string,
  months: string[],
  changes: FileChange[],
): Promise<void> {
  const options = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1';
  const copyMonth = async (month: string) => {
    const target = join(dir, `${month}.parquet`);
    const temp = tempPathFor(target);
    changes.push({ temp, target });
    await conn.run(`COPY (SELECT * FROM ${id(mart)} WHERE ${rowsOf(time, month)}) TO ${str(temp)} (${options})`);
  };
  if (months.length === 1) return copyMonth(months[0]);
  const scratch = tempPathFor(join(dir, 'months'));
  const at = changes.push({ scratch }) - 1;
  const where = months.map((m) => `(${rowsOf(time, m)})`).join(' OR ');
  await conn.run(
    `COPY (SELECT *, coalesce(strftime(${time}, '%Y-%m'), ${str(NO_MONTH)}) AS ${PART} FROM ${id(mart)} WHERE ${where})
     TO ${str(scratch)} (${options}, PARTITION_BY (${PART}))`,
  );
  for (const month of months) {
    const part = join(scratch, `${PART}=${month}`);
    const written = existsSync(part) ? readdirSync(part).filter((n) => n.endsWith('.parquet')) : [];
    // one file per partition is what DuckDB writes; anything else is written on its own
    if (written.length === 1) changes.push({ temp: join(part, written[0]), target: join(dir, `${month}.parquet`) });
    else await copyMonth(month);
  }
  changes.push(...changes.splice(at, 1)); // the scratch folder goes once its files have moved out
}

function rowsOf(time: string, month: string): string {
  return month === NO_ROWS ? 'false' : month === NO_MONTH ? `${time} IS NULL` : inMonth(time, month);
}

function readToken(dir: string): string | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, TOKEN_FILE), 'utf8')) as { token?: unknown };
    return typeof parsed.token === 'string' ? parsed.token : undefined;
  } catch {
    return undefined; // none, or unreadable: the folder is written whole
  }
}
