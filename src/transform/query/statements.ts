/**
 * The statements of a `perks sql` query, cut and checked by DuckDB itself before any is bound: binding is
 * not harmless (preparing EXPORT DATABASE already creates its directory). DuckDB cuts the text
 * (extract_statements) and its parser checks it (json_serialize_sql serialises SELECT-like statements only:
 * SELECT, FROM-first, VALUES, DESCRIBE, SHOW, SUMMARIZE, UNPIVOT, a PIVOT with an IN list, CTEs); the tree
 * names every function called, and none may have a side effect (enable_logging writes log files…). A query
 * is one statement: several are refused (each read, but only one result shown), after any write among them is.
 *
 * Two shapes need more than the parser's tree:
 * - EXPLAIN [ANALYZE] <query>: the query after the keyword is what must be read-only.
 * - A PIVOT without an IN list: DuckDB turns the one statement into `CREATE TEMPORARY TYPE __pivot_enum_…`
 *   statements (the pivoted values) followed by the pivot, and serialises none of them. It passes when the
 *   text is one SELECT-like statement (it starts with PIVOT, WITH, FROM, SELECT or a parenthesis and has no
 *   `;` but a trailing one), names no function with a side effect anywhere, and DuckDB made more than one
 *   statement of it: each is then prepared in turn and must be a CREATE (the pivoted values, in a temporary
 *   type of this connection) or, last, a SELECT. Nothing else is ever prepared unchecked.
 */
import { StatementType, type DuckDBConnection, type DuckDBExtractedStatements } from '../../shared/duckdb.js';
import { firstLineWithHint, QueryError, withDuckdbDetail } from '../errors.js';

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
  // they run SQL text or a serialised plan the check cannot see (json_serialize_plan binds, as preparing does)
  'query',
  'query_table',
  'json_execute_serialized_sql',
  'json_serialize_plan',
]);

/** The first keywords of the statements that read (a refused query is named by its first other keyword). */
const READING = new Set(
  'SELECT WITH FROM VALUES TABLE DESCRIBE DESC SHOW SUMMARIZE EXPLAIN PIVOT UNPIVOT PIVOT_WIDER PIVOT_LONGER'.split(
    ' ',
  ),
);
const READING_TYPES = [StatementType.SELECT, StatementType.EXPLAIN];

export const refused = (what: string) =>
  new QueryError(
    `the warehouse is read-only here: ${what} is refused (\`perks build\` rebuilds it; query it with SELECT)`,
  );

export const EMPTY = 'the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"';

/** A query DuckDB has cut and its parser has checked; `prepare` binds one statement and checks its type. */
export interface CheckedQuery {
  readonly count: number;
  /** The text of the last statement, for wrapping in COPY (…): the query's own, or DuckDB's rendering of it. */
  readonly lastText: string;
  /** How many CREATE TEMPORARY TYPE statements DuckDB put before a PIVOT without an IN list (else 0). */
  readonly pivotEnums: number;
  readonly extracted: DuckDBExtractedStatements;
}

interface Tree {
  error: boolean;
  error_message?: string;
  statements?: unknown[];
}

/** Cuts and checks every statement of `sql` before any is prepared: "SELECT 1; DROP …" does nothing. */
export async function checkQuery(conn: DuckDBConnection, sql: string): Promise<CheckedQuery> {
  const extracted = await conn.extractStatements(sql).catch((err: unknown) => {
    throw new QueryError(withDuckdbDetail(`the query is not valid SQL: ${firstLineWithHint(err)}`, err));
  });
  if (extracted.count === 0) throw new QueryError(EMPTY);
  const explained = /^\s*EXPLAIN\s+(ANALY[SZ]E\s+)?(\([^)]*\)\s*)?/i.exec(sql);
  const tree = await serialise(conn, explained ? sql.slice(explained[0].length) : sql);
  if (!tree.error) {
    refuseSideEffects(calledFunctions(tree.statements));
    const statements = tree.statements ?? [];
    if (statements.length !== extracted.count)
      throw new QueryError('the query could not be cut into statements: give one statement at a time');
    if (statements.length > 1) throw new QueryError(several(statements.length));
    // the last statement's text is wrapped in COPY (…) for Parquet; EXPLAIN is never written
    const single = explained !== null || (statements.length === 1 && !sql.includes(';'));
    const lastText = single ? sql : await renderLast(conn, sql);
    return { count: extracted.count, lastText, pivotEnums: 0, extracted };
  }
  if (!explained && isLonePivot(sql) && extracted.count > 1) {
    refuseSideEffects(namedFunctions(sql));
    return { count: extracted.count, lastText: sql.replace(/;\s*$/, ''), pivotEnums: extracted.count - 1, extracted };
  }
  const word = refusedWord(sql);
  // every statement starts as a read, yet the parser refused one: a PIVOT without an IN list in company
  if (word === undefined) throw new QueryError(PIVOT_ALONE);
  throw refused(word);
}

/**
 * More than one statement is refused, not run: only the last one's result could be shown, and the others can change
 * nothing (read-only, the configuration locked), so they would run for nothing and their results be dropped unseen.
 */
const several = (n: number) =>
  `the query has ${n} statements, and perks sql runs one and shows its result: run them one at a time (a trailing ";" is fine)`;

const PIVOT_ALONE =
  "a PIVOT without an IN list must be the query's only statement, without EXPLAIN (DuckDB runs it in two steps): " +
  "run it alone, or name its values, e.g. ON order_currency IN ('EUR', 'GBP')";

/**
 * Binds statement `i` of a checked query and refuses it unless it is a read (or, before a PIVOT without
 * an IN list, DuckDB's CREATE of the pivoted values). Called in order, each after the one before has run.
 */
export async function prepareChecked(query: CheckedQuery, i: number, failed: (err: unknown) => never) {
  const prepared = await query.extracted.prepare(i).catch(failed);
  const type = prepared.statementType;
  const expected = i < query.pivotEnums ? [StatementType.CREATE] : READING_TYPES;
  if (!expected.includes(type)) throw refused(StatementType[type]);
  if (query.pivotEnums > 0 && i === query.count - 1 && type !== StatementType.SELECT)
    throw refused(StatementType[type]);
  return prepared;
}

async function serialise(conn: DuckDBConnection, sql: string): Promise<Tree> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS tree', [sql]);
  return JSON.parse(String(reader.getRows()[0][0])) as Tree;
}

/** DuckDB's own SQL text of the last statement of `sql` (inside DuckDB: the tree's positions are 64-bit). */
async function renderLast(conn: DuckDBConnection, sql: string): Promise<string> {
  const reader = await conn.runAndReadAll(
    `SELECT json_deserialize_sql(json_object('error', false, 'statements',
       json_array(json_extract(json_serialize_sql($1::VARCHAR), '$.statements[#-1]')))) AS text`,
    [sql],
  );
  return String(reader.getRows()[0][0]);
}

/** One SELECT-like statement by its text alone: no leading comment, no `;` but a trailing one. */
const isLonePivot = (sql: string): boolean =>
  /^\s*(PIVOT|WITH|FROM|SELECT|\()/i.test(sql) && !sql.replace(/;\s*$/, '').includes(';');

function refuseSideEffects(called: Set<string>): void {
  const writing = [...called].filter((f) => SIDE_EFFECTS.has(f));
  if (writing.length > 0) throw refused(`${writing[0]}()`);
}

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

/** Every word of the text, lower case: a superset of the functions it can call (quoted names included). */
const namedFunctions = (sql: string): Set<string> =>
  new Set((sql.match(/[A-Za-z_][A-Za-z_0-9]*/g) ?? []).map((w) => w.toLowerCase()));

/** The statement a refusal names: the first keyword, at the start or after a `;`, that does not read. */
function refusedWord(sql: string): string | undefined {
  const starts = sql.split(';').map((s) => s.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, ''));
  const words = starts.map((s) => /^[A-Za-z_]*/.exec(s)![0].toUpperCase()).filter((w) => w !== '');
  if (words.length === 0) return 'a statement that is not a SELECT';
  return words.find((w) => !READING.has(w));
}
