/**
 * Dependencies from the SQL itself: DuckDB's own parser (json_serialize_sql) lists the tables a query
 * reads; those that name another model or a lake view (`lake_<stream>`) are its dependencies. A name
 * that is neither (and no CTE of the query) is a missing model. Models are then ordered topologically.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { ModelGraphError } from '../errors.js';
import type { ModelFile, Project } from './model-files.js';

export interface Node extends ModelFile {
  /** Models and lake views this one reads, sorted. */
  dependsOn: string[];
}

export interface Graph {
  /** Models in build order: every model after the ones it reads. */
  models: Node[];
  tests: Node[];
}

const LAYER_ORDER = ['staging', 'intermediate', 'marts'];
const rank = (layer: string) => {
  const i = LAYER_ORDER.indexOf(layer);
  return i < 0 ? LAYER_ORDER.length : i;
};

/** DuckDB's parse tree of `sql` (json_serialize_sql): `error` and `error_message` when it cannot be parsed. */
export async function parseTree(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($sql::VARCHAR) AS ast', {
    sql: stripTrailingSemicolon(sql),
  });
  return JSON.parse((reader.getRowObjectsJson()[0] as { ast: string }).ast) as Record<string, unknown>;
}

/** Calls `visit` on every object node of a parse tree, parents first. */
export function visitTree(node: unknown, visit: (n: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) return node.forEach((child) => visitTree(child, visit));
  if (!node || typeof node !== 'object') return;
  visit(node as Record<string, unknown>);
  Object.values(node).forEach((child) => visitTree(child, visit));
}

/** Table names a SELECT reads (lower-cased), minus its own CTE names. */
export async function tableReferences(conn: DuckDBConnection, sql: string, file: string): Promise<string[]> {
  const ast = await parseTree(conn, sql);
  if (ast.error) {
    const message = typeof ast.error_message === 'string' ? ast.error_message : 'cannot be parsed';
    const hint = /only SELECT/i.test(message) ? 'a model is one SELECT query (the runner creates the table)' : message;
    throw new ModelGraphError(`${file}: ${hint}`);
  }
  if (Array.isArray(ast.statements) && ast.statements.length !== 1) {
    throw new ModelGraphError(`${file}: a model is one SELECT query, not ${ast.statements.length} statements`);
  }
  const refs = new Set<string>();
  const ctes = new Set<string>();
  visitTree(ast, (n) => {
    if (n.type === 'BASE_TABLE' && typeof n.table_name === 'string') {
      const schema = typeof n.schema_name === 'string' ? n.schema_name : '';
      const external = (schema !== '' && schema !== 'main') || /[./]/.test(n.table_name);
      if (!external) refs.add(n.table_name.toLowerCase());
    }
    const cteMap = n.cte_map as { map?: { key: string }[] } | undefined;
    for (const cte of cteMap?.map ?? []) ctes.add(cte.key.toLowerCase());
  });
  return [...refs].filter((r) => !ctes.has(r)).sort();
}

/** The query without its closing `;` (and comments after it), so the runner can wrap it in CREATE … AS (…). */
export function stripTrailingSemicolon(sql: string): string {
  return sql.replace(/;(\s*--[^\n]*)*\s*$/, '');
}

export async function resolveGraph(conn: DuckDBConnection, project: Project, lakeViews: string[]): Promise<Graph> {
  const byName = new Map(project.models.map((m) => [m.name, m]));
  const known = new Set([...byName.keys(), ...lakeViews]);
  const withDeps = async (m: ModelFile): Promise<Node> => {
    const refs = await tableReferences(conn, m.sql, m.file);
    const extra = m.header.tests.flatMap((t) => (t.kind === 'relationships' ? [t.toModel] : []));
    if (m.header.model) extra.push(m.header.model);
    for (const ref of [...refs, ...extra]) {
      if (!known.has(ref)) {
        throw new ModelGraphError(
          `${m.file} references "${ref}", which is neither a model (sql/<layer>/${ref}.sql) nor a lake view (lake_<stream>)`,
        );
      }
    }
    return { ...m, dependsOn: [...new Set(refs)].sort() };
  };
  const models: Node[] = [];
  for (const m of project.models) models.push(await withDeps(m));
  const tests: Node[] = [];
  for (const t of project.tests) tests.push(await withDeps(t));
  return { models: topologicalOrder(models), tests };
}

/** Kahn's algorithm; among ready models, staging before intermediate before marts, then by name. */
export function topologicalOrder(nodes: Node[]): Node[] {
  const names = new Set(nodes.map((n) => n.name));
  const pending = new Map(nodes.map((n) => [n.name, new Set(n.dependsOn.filter((d) => names.has(d)))]));
  const order: Node[] = [];
  const byName = new Map(nodes.map((n) => [n.name, n]));
  while (pending.size > 0) {
    const ready = [...pending.entries()]
      .filter(([, deps]) => deps.size === 0)
      .map(([name]) => byName.get(name)!)
      .sort((a, b) => rank(a.layer) - rank(b.layer) || a.name.localeCompare(b.name));
    if (ready.length === 0) throw new ModelGraphError(describeCycle(byName, pending));
    const next = ready[0];
    order.push(next);
    pending.delete(next.name);
    for (const deps of pending.values()) deps.delete(next.name);
  }
  return order;
}

/** Follows unmet dependencies from any blocked model until one repeats: that loop is the cycle. */
function describeCycle(byName: Map<string, Node>, pending: Map<string, Set<string>>): string {
  let at = [...pending.keys()].sort()[0];
  const path: string[] = [];
  while (!path.includes(at)) {
    path.push(at);
    at = [...pending.get(at)!].sort()[0];
  }
  const loop = [...path.slice(path.indexOf(at)), at];
  return `cycle between models: ${loop.map((n) => `${n} (${byName.get(n)!.file})`).join(' -> ')}`;
}
