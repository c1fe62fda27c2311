/**
 * `perks sql`: ad-hoc SQL against the warehouse, read-only for the database AND for files. The database
 * is opened with access_mode READ_ONLY; every statement is then cut and checked by DuckDB itself before any
 * is bound (statements.ts: only reads pass, PIVOT included, and no function with a side effect). The
 * configuration is locked first, so nothing can point a log or profile at a file, and extensions are never
 * downloaded.
 *
 * Files are confined to the output directory by default: DuckDB's `enable_external_access = false` with
 * the output directory as the one `allowed_directories` entry, locked, so `read_text('/etc/passwd')` or
 * `glob('/root/*')` is refused, while the lake views (relative to the output directory through
 * `file_search_path`) and `read_parquet('lake/…')` still read. A BI tool or agent running queries on
 * someone's behalf sees that folder and nothing else; an analyst at a shell who wants files elsewhere
 * passes `--read-files-anywhere` (`filesAnywhere`).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { repairHint, useOutputDir } from '../sources/lake-views.js';
import {
  DuckDBInstance,
  listValue,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type Json,
} from '../../shared/duckdb.js';
import { firstLine, firstLineWithHint, QueryError, WarehouseMissingError, withDuckdbDetail } from '../errors.js';
import { checkQuery, EMPTY, prepareChecked, refused } from './statements.js';
import { LakeError, streamDir } from '../../lake/index.js';

export interface QueryResult {
  columns: string[];
  /** DuckDB's type of each column (`BIGINT`, `DECIMAL(18,2)`…), in the order of `columns`. */
  types: string[];
  /** JSON-safe values: BIGINT and DECIMAL as strings, timestamps as ISO text. */
  rows: Record<string, Json>[];
}

/** The flag that lifts the confinement to the output directory. */
export const FILES_ANYWHERE_FLAG = '--read-files-anywhere';

/** Data the query reads cannot be read (a damaged lake file or warehouse): a failure, exit 1, not bad input. */
export class QueryDataError extends LakeError {}

const UNREADABLE = 'the query could not read its data';

/** A lake stream's file that cannot be read: withReadOnlyQuery, which knows the output, names its repair. */
class UnreadableStreamError extends QueryDataError {
  constructor(
    readonly line: string,
    readonly stream: string,
  ) {
    super(`${UNREADABLE}: ${line}; \`perks build\` names a damaged lake file and the command that repairs it`);
  }
}

/** An unreadable stream's error, its repair named in `outDir` (the output of the query under way). */
function withRepair(err: unknown, outDir: string): unknown {
  if (!(err instanceof UnreadableStreamError)) return err;
  const hint = repairHint(outDir, err.stream, streamDir(outDir, err.stream));
  return hint ? new QueryDataError(`${UNREADABLE}: ${err.line}${hint}`) : err;
}

/**
 * DuckDB's own refusal (the database is READ_ONLY, a file outside the output directory) or any other
 * failure, as one line. A file that cannot be read is the data's fault (exit 1); the rest is the query's (exit 2),
 * and DuckDB's whole message follows its line (the candidate columns, the caret under the place).
 */
export function failed(err: unknown): never {
  const line = firstLine(err);
  if (/read-only/i.test(line)) throw refused('a statement that writes');
  if (/^Permission Error/i.test(line) || /disabled by configuration/i.test(line)) {
    throw new QueryError(
      `the query reads a file outside the output directory, ` +
        `which is refused (${line.replace(/^Permission Error:\s*/i, '')}); pass ${FILES_ANYWHERE_FLAG} to read files elsewhere`,
    );
  }
  if (
    /^IO Error|^Invalid Input Error:.*(parquet|magic|footer|too small)|^Serialization Error|^INTERNAL Error/i.test(line)
  ) {
    const stream = /lake[\\/]([a-z_]+)[\\/]/.exec(line)?.[1];
    if (stream) throw new UnreadableStreamError(line, stream);
    throw new QueryDataError(
      `${UNREADABLE}: ${line}; \`perks build\` names a damaged lake file and the command that repairs it`,
    );
  }
  throw new QueryError(withDuckdbDetail(`the query failed: ${firstLineWithHint(err)}`, err));
}

/** Our own refusals pass as they are; DuckDB's errors become one line. */
const failedUnlessRefused = (err: unknown): never => {
  if (err instanceof QueryError) throw err;
  return failed(err);
};

export interface QueryOptions {
  /** Lift the confinement of file access to the warehouse's folder (`--read-files-anywhere`). */
  filesAnywhere?: boolean;
  /** Files the program itself writes (an export's temporary file), allowed even when confined. */
  allowedFiles?: string[];
}

/** The last statement of a query, checked and prepared: what a caller reads its result from. */
export interface LastStatement {
  readonly prepared: DuckDBPreparedStatement;
  /** Its text, as checked (DuckDB's rendering of it when the text holds a `;`). */
  readonly text: string;
  /** How many CREATE TEMPORARY TYPE statements DuckDB makes before it when it is a PIVOT without an IN list. */
  readonly pivotEnums: number;
  readonly connection: DuckDBConnection;
}

/**
 * Opens the warehouse read-only, checks `sql` (one statement: statements.ts) before anything runs, runs the
 * statements DuckDB itself puts before a PIVOT without an IN list (its pivoted values), if any,
 * and hands the last, prepared and SELECT-like, to `read` (rows, an Arrow stream, a Parquet file).
 */
export async function withReadOnlyQuery<T>(
  warehouse: string,
  sql: string,
  read: (last: LastStatement) => Promise<T>,
  options: QueryOptions = {},
): Promise<T> {
  if (sql.trim() === '') throw new QueryError(EMPTY);
  if (!existsSync(warehouse)) throw new WarehouseMissingError(warehouse);
  const outDir = dirname(resolve(warehouse));
  const instance = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY' }).catch((err: unknown) => {
    throw new QueryDataError(
      `the warehouse ${warehouse} cannot be opened: ${firstLine(err)}; rebuild it with \`perks build\``,
    );
  });
  const conn = await instance.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    await conn.run('SET autoinstall_known_extensions = false'); // an unknown file type would download an extension
    await conn.run('SET autoload_known_extensions = false');
    await useOutputDir(conn, outDir); // the lake views' relative paths resolve in this folder
    if (!options.filesAnywhere) {
      // Prefixes: the trailing separator keeps /data/out from allowing /data/outside. The relative ones are the
      // lake views' own paths, which resolve only in the output directory (file_search_path; no fallback to
      // the working directory). DuckDB refuses any path with `..` once external access is off.
      const prefixes = [outDir.endsWith(sep) ? outDir : `${outDir}${sep}`, `lake${sep}`, `marts${sep}`];
      await conn.run('SET allowed_directories = $dirs', { dirs: listValue(prefixes) });
      if (options.allowedFiles?.length)
        await conn.run('SET allowed_paths = $files', { files: listValue(options.allowedFiles.map((f) => resolve(f))) });
      await conn.run('SET enable_external_access = false');
    }
    await conn.run('SET lock_configuration = true'); // no SET/PRAGMA can point a log or a profile at a file, or lift the confinement
    const query = await checkQuery(conn, sql).catch(failedUnlessRefused);
    for (let i = 0; i < query.count; i++) {
      const prepared = await prepareChecked(query, i, failed);
      if (i === query.count - 1)
        return await read({ prepared, text: query.lastText, pivotEnums: query.pivotEnums, connection: conn });
      await prepared.runAndReadAll().catch(failed);
    }
    throw new QueryError(EMPTY);
  } catch (err) {
    throw withRepair(err, outDir);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Runs every statement of `sql` and returns the last one's rows. */
export async function queryWarehouse(warehouse: string, sql: string, options: QueryOptions = {}): Promise<QueryResult> {
  return withReadOnlyQuery(
    warehouse,
    sql,
    async ({ prepared }) => {
      const reader = await prepared.runAndReadAll().catch(failed);
      const types = reader.columnTypes().map((t) => t.toString());
      return { columns: reader.columnNames(), types, rows: reader.getRowObjectsJson() };
    },
    options,
  );
}
