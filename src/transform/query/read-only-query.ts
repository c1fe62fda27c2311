/**
 * `perks sql`: ad-hoc SQL against the warehouse, read-only for the database AND for files. The database
 * is opened with access_mode READ_ONLY; every statement is then checked by DuckDB's parser alone
 * (json_serialize_sql, which serialises SELECT-like statements only) before any is bound: binding is
 * not harmless (preparing EXPORT DATABASE already creates its directory). Only SELECT, WITH, FROM,
 * VALUES, DESCRIBE, SHOW, SUMMARIZE and EXPLAIN of those pass, and none may call a function with a side
 * effect (enable_logging writes log files, enable_profiling a profile…). The configuration is locked
 * first, so nothing can point a log or profile at a file, and extensions are never downloaded.
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
  StatementType,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type Json,
} from '../../shared/duckdb.js';
import { firstLine, QueryError, WarehouseMissingError } from '../errors.js';
import { LakeError, streamDir } from '../../lake/index.js';

export interface QueryResult {
  columns: string[];
  /** DuckDB's type of each column (`BIGINT`, `DECIMAL(18,2)`…), in the order of `columns`. */
  types: string[];
  /** JSON-safe values: BIGINT and DECIMAL as strings, timestamps as ISO text. */
  rows: Record<string, Json>[];
}

/** Table or scalar functions that change the session or write files, though called from a SELECT. */
const SIDE_EFFECTS = new Set([
  'enable_logging',
  'disable_logging',
  'truncate_duckdb_logs',
  'write_log',
  'enable_profiling',
  'disable_profiling',
  'enable_peg_parser',
  'disable_peg_parser',
  'checkpoint',
  'force_checkpoint',
  // they run SQL text or a serialised plan the check cannot see
  'query',
  'query_table',
  'json_execute_serialized_sql',
]);

const refused = (what: string) =>
  new QueryError(
    `the warehouse is read-only here: ${what} is refused (\`perks build\` rebuilds it; query it with SELECT)`,
  );

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
 * failure, as one line. A file that cannot be read is the data's fault (exit 1); the rest is the query's (exit 2).
 */
export function failed(err: unknown): never {
  const line = firstLine(err);
  if (/read-only/i.test(line)) throw refused('a statement that writes');
  if (/^Permission Error/i.test(line) || /disabled by configuration/i.test(line)) {
    throw new QueryError(
      `the query reads a file outside the output directory, which is refused (${line.replace(/^Permission Error:\s*/i, '')}); pass ${FILES_ANYWHERE_FLAG} to read files elsewhere`,
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
  throw new QueryError(`the query failed: ${line}`);
}

/** The text of `sql` cut at its top-level semicolons; quotes, dollar quotes and comments are skipped. */
function splitStatements(sql: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let i = 0;
  const skipTo = (end: string, from: number) => {
    const at = sql.indexOf(end, from);
    return at < 0 ? sql.length : at + end.length;
  };
  while (i < sql.length) {
    const c = sql[i];
    const dollar = c === '$' ? /^\$[A-Za-z_]*\$/.exec(sql.slice(i)) : null;
    if (c === "'" || c === '"')
      i = skipTo(c, i + 1); // a doubled quote is two adjacent quoted runs
    else if (sql.startsWith('--', i)) i = skipTo('\n', i);
    else if (sql.startsWith('/*', i)) i = skipTo('*/', i + 2);
    else if (dollar) i = skipTo(dollar[0], i + dollar[0].length);
    else if (c === ';') {
      parts.push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  parts.push(sql.slice(start));
  return parts.filter((p) => body(p) !== '');
}

/** The statement without its leading blanks and comments. */
const body = (statement: string): string => statement.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, '');

/** The first keyword of a statement, upper case ('' for blanks and comments only). */
const firstWord = (statement: string): string => /^[A-Za-z_]*/.exec(body(statement))![0].toUpperCase();

/** Every function a parsed statement calls, from DuckDB's JSON serialisation of it. */
function calledFunctions(node: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) for (const n of node) calledFunctions(n, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'function_name' && typeof value === 'string') into.add(value.toLowerCase());
      else calledFunctions(value, into);
    }
  }
  return into;
}

/** Refuses a statement that is not SELECT-like or calls a function with a side effect, by parsing only. */
async function checkReading(conn: DuckDBConnection, statement: string): Promise<void> {
  const word = firstWord(statement);
  // EXPLAIN [ANALYZE] [(options)] <select>: the select is what must be read-only
  const inner =
    word === 'EXPLAIN' ? body(statement).replace(/^EXPLAIN\s+(ANALY[SZ]E\s+)?(\([^)]*\)\s*)?/i, '') : statement;
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS tree', [inner]).catch(failed);
  const tree = JSON.parse(String(reader.getRows()[0][0])) as { error: boolean; statements?: unknown };
  if (tree.error) throw refused(word || 'a statement that is not a SELECT');
  const writing = [...calledFunctions(tree.statements)].filter((f) => SIDE_EFFECTS.has(f));
  if (writing.length > 0) throw refused(`${writing[0]}()`);
}

export interface QueryOptions {
  /** Lift the confinement of file access to the warehouse's folder (`--read-files-anywhere`). */
  filesAnywhere?: boolean;
  /** Files the program itself writes (an export's temporary file), allowed even when confined. */
  allowedFiles?: string[];
}

/** The last statement of a query, checked and prepared: what a caller reads its result from. */
export interface LastStatement {
  readonly prepared: DuckDBPreparedStatement;
  /** Its text, exactly as checked. */
  readonly text: string;
  readonly connection: DuckDBConnection;
}

/**
 * Opens the warehouse read-only, checks every statement of `sql` before any runs, runs all but the last,
 * and hands the last, prepared and SELECT-like, to `read` (rows, an Arrow stream, a Parquet file).
 */
export async function withReadOnlyQuery<T>(
  warehouse: string,
  sql: string,
  read: (last: LastStatement) => Promise<T>,
  options: QueryOptions = {},
): Promise<T> {
  if (sql.trim() === '')
    throw new QueryError('the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"');
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
    const extracted = await conn.extractStatements(sql).catch((err: unknown) => {
      throw new QueryError(`the query is not valid SQL: ${firstLine(err)}`);
    });
    if (extracted.count === 0)
      throw new QueryError('the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"');
    const statements = splitStatements(sql);
    if (statements.length !== extracted.count)
      throw new QueryError('the query could not be cut into statements: give one statement at a time');
    // every statement is checked before any is prepared or runs: "SELECT 1; DROP …" does nothing
    for (const statement of statements) await checkReading(conn, statement);
    for (const [i, statement] of statements.entries()) {
      // what runs is exactly the text that was checked
      const one = await conn.extractStatements(statement);
      if (one.count !== 1)
        throw new QueryError('the query could not be cut into statements: give one statement at a time');
      const prepared = await one.prepare(0).catch(failed);
      if (![StatementType.SELECT, StatementType.EXPLAIN].includes(prepared.statementType))
        throw refused(StatementType[prepared.statementType]);
      if (i === statements.length - 1) return await read({ prepared, text: statement, connection: conn });
      await prepared.runAndReadAll().catch(failed);
    }
    throw new QueryError('the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"');
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
