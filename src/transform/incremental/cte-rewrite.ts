/**
 * A model's SQL rewritten through DuckDB's own parser (json_serialize_sql, json_deserialize_sql), never by text:
 * one of its CTEs read alone, or some CTEs read from tables. A model built by users (by-user.ts) computes its
 * group-wide CTEs over every user once, then rebuilds its dirty users reading them so.
 */
import { type DuckDBConnection } from '../../shared/duckdb.js';
import { parseTree, visitTree } from '../models/model-graph.js';

interface CteEntry {
  key: string;
  value: { query: { node: unknown } };
}

interface Statement {
  node: { cte_map: { map: CteEntry[] } } & Record<string, unknown>;
}

/** The SQL of `SELECT * FROM <cte>` under the model's WITH clause: the CTE's rows. */
export async function cteQuery(conn: DuckDBConnection, sql: string, cte: string): Promise<string> {
  const tree = await parseTree(conn, sql);
  const statement = statementOf(tree, sql);
  entryOf(statement, cte);
  const select = await nodeOf(conn, `SELECT * FROM "${cte.replace(/"/g, '""')}"`);
  statement.node = { ...(select as object), cte_map: statement.node.cte_map };
  return deserialize(conn, tree);
}

/** The model's SQL with each CTE of `tables` (CTE name → table) reading that table instead of its query. */
export async function withCtesFrom(conn: DuckDBConnection, sql: string, tables: Map<string, string>): Promise<string> {
  const tree = await parseTree(conn, sql);
  const statement = statementOf(tree, sql);
  for (const [cte, table] of tables)
    entryOf(statement, cte).value.query.node = await nodeOf(conn, `SELECT * FROM "${table.replace(/"/g, '""')}"`);
  return deserialize(conn, tree);
}

function statementOf(tree: Record<string, unknown>, sql: string): Statement {
  const statements = tree.statements as Statement[] | undefined;
  if (tree.error || !statements || statements.length !== 1)
    throw new Error(
      `cannot rewrite the model's SQL: ${typeof tree.error_message === 'string' ? tree.error_message : sql.slice(0, 60)}`,
    );
  return statements[0];
}

function entryOf(statement: Statement, cte: string): CteEntry {
  const entry = statement.node.cte_map?.map.find((e) => e.key === cte);
  if (!entry) throw new Error(`the model's SQL has no CTE ${cte} (named in its group-wide: line)`);
  return entry;
}

async function nodeOf(conn: DuckDBConnection, sql: string): Promise<unknown> {
  return (statementOf(await parseTree(conn, sql), sql) as { node: unknown }).node;
}

async function deserialize(conn: DuckDBConnection, tree: Record<string, unknown>): Promise<string> {
  // a position past 2^53 (unknown) does not survive JSON.parse: positions only point errors at the text
  visitTree(tree, (n) => {
    if ('query_location' in n) n.query_location = 0;
  });
  const r = await conn.runAndReadAll('SELECT json_deserialize_sql($tree::JSON) AS sql', {
    tree: JSON.stringify(tree),
  });
  return (r.getRowObjectsJson()[0] as { sql: string }).sql;
}
