/**
 * Building a model by users (header `incremental: user on <group>, <user>[ = <own column>]`): only the users whose
 * upstream rows changed since the model's last build are computed again (their rows deleted and inserted again in
 * the copy of the previous warehouse the build works on), the others' rows kept. A model so built promises that a
 * user's rows follow from that user's upstream rows alone, besides its `group-wide:` CTEs (facts of a whole group,
 * such as its majority currency).
 * - The users dirty: those of the rows an upstream model built by intervals replaced with other rows in this build
 *   (incremental.ts keeps them as it replaces its intervals: the old rows against the new, either way), and every
 *   user of a group whose group-wide CTEs' rows changed (computed over the whole upstream, a count and hash per
 *   group kept in the model's state).
 * - A dirty user is rebuilt from that user's upstream rows (each upstream model seen through a temporary view of
 *   the dirty users' rows), the group-wide CTEs read as computed over every user.
 * - Built whole when there is no earlier state or table, its SQL or a setting it reads changed, `--full`, or an
 *   upstream model changed without saying which users (built whole in this build, or not built by intervals); and
 *   when a row rebuilt falls outside the dirty users (the header's promise broken: the summary says so).
 * `perks build --verify-incremental` compares the result with a full build's, row for row.
 */
import { quotedIdentifier as id, type DuckDBConnection } from '../../shared/duckdb.js';
import type { ByUser } from '../models/header.js';
import { stripTrailingSemicolon, type Node } from '../models/model-graph.js';
import { settingsHash, sha, type ModelState } from './build-state.js';
import type { IncrementalOutcome, IntervalCounts } from './outcome.js';
import { cteQuery, withCtesFrom } from './cte-rewrite.js';
import { rowDigestSql } from './row-digest.js';

/** What a build by users needs of the build by intervals (incremental.ts) it runs beside. */
export interface ByUserContext {
  conn: DuckDBConnection;
  previous: Map<string, ModelState> | null;
  previousTables: Set<string>;
  /** The states written with the warehouse: this model's is set here. */
  states: Map<string, ModelState>;
  /** The users whose rows of an upstream model built by intervals changed in this build (IncrementalModels). */
  changedUsers: (model: string) => { table: string } | 'none' | null;
  /** Whether an upstream model has the rows it had at the previous build (model-versions.ts). */
  unchanged: (model: string) => boolean;
}

const USERS = '_perks_dirty_users';
const GROUPS = '_perks_dirty_groups';
const REBUILT = '_perks_rebuilt_users';
const groupWideTable = (n: number) => `_perks_group_wide_${n}`;
/** The key of a group-wide CTE's fingerprint per group in ModelState.inputs. */
const groupWideInput = (cte: string) => `group-wide: ${cte}`;

export async function buildByUser(ctx: ByUserContext, model: Node): Promise<IncrementalOutcome> {
  const by = model.header.byUser!;
  const { conn } = ctx;
  const current: ModelState = {
    sql: sha(model.sql),
    settings: await settingsHash(conn, model.sql),
    partitions: {},
    inputs: {},
  };
  ctx.states.set(model.name, current);
  const prev = ctx.previous?.get(model.name);
  // nothing it reads changed: its rows and its group-wide CTEs' are the previous build's (not computed again)
  if (prev && ctx.previousTables.has(model.name) && model.dependsOn.every((dep) => ctx.unchanged(dep))) {
    current.inputs = prev.inputs;
    if (!wholeReason(ctx, model, current)) return { rows: await count(conn, model.name), intervals: byUsers(0) };
    current.inputs = {};
  }
  const groupWide = new Map<string, string>();
  try {
    for (const [n, cte] of by.groupWide.entries()) {
      groupWide.set(cte, groupWideTable(n));
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${groupWideTable(n)} AS ${await cteQuery(conn, model.sql, cte)}`);
      current.inputs[groupWideInput(cte)] = await perGroup(conn, groupWideTable(n), by.group);
    }
    const whole = wholeReason(ctx, model, current);
    if (whole) return await buildWhole(conn, model, whole);
    const dirty = await stageDirty(ctx, model, by, current);
    if (dirty.users === 0) return { rows: await count(conn, model.name), intervals: byUsers(0) };
    const outside = await rebuildUsers(conn, model, by, groupWide);
    if (outside) return await buildWhole(conn, model, outside);
    return { rows: await count(conn, model.name), intervals: byUsers(dirty.users) };
  } finally {
    for (const t of [USERS, GROUPS, REBUILT, ...groupWide.values()]) await conn.run(`DROP TABLE IF EXISTS temp.${t}`);
  }
}

const byUsers = (rebuilt: number, whole?: string): IntervalCounts => ({
  rebuilt,
  skipped: 0,
  unit: 'users' as const,
  ...(whole ? { whole } : {}),
});

/** Why the model must be built whole rather than by users; undefined when users will do. */
function wholeReason(ctx: ByUserContext, model: Node, current: ModelState): string | undefined {
  const prev = ctx.previous?.get(model.name);
  if (ctx.previous === null) return 'asked for (--full)';
  if (!prev || !ctx.previousTables.has(model.name)) return 'no earlier build of it';
  if (prev.sql !== current.sql) return 'its SQL changed';
  if (prev.settings !== current.settings) return 'a setting it reads changed';
  for (const dep of model.dependsOn)
    if (!ctx.unchanged(dep) && ctx.changedUsers(dep) === null)
      return `${dep} changed and does not say which users (it was not built by intervals)`;
  for (const [key, now] of Object.entries(current.inputs)) {
    const before = prev.inputs[key] ?? {};
    if ((before['*'] ?? null) !== (now['*'] ?? null)) return `${key.slice(key.indexOf(' ') + 1)} has rows of no group`;
  }
  return undefined;
}

/** The dirty users and groups, staged as temporary tables; how many users. */
async function stageDirty(ctx: ByUserContext, model: Node, by: ByUser, current: ModelState) {
  const { conn } = ctx;
  const prev = ctx.previous!.get(model.name)!;
  const groups = new Set<string>();
  for (const [key, now] of Object.entries(current.inputs)) {
    const before = prev.inputs[key] ?? {};
    for (const g of new Set([...Object.keys(before), ...Object.keys(now)])) if (before[g] !== now[g]) groups.add(g);
  }
  const tables = model.dependsOn.flatMap((dep) => {
    const changed = ctx.changedUsers(dep);
    return changed && changed !== 'none' ? [changed.table] : [];
  });
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${GROUPS} (g BIGINT)`);
  for (const g of groups) await conn.run(`INSERT INTO ${GROUPS} VALUES ($g::BIGINT)`, { g });
  // a dirty group's users: those of its upstream rows now, and those the model holds (a user with no rows any more)
  const inGroups = [
    ...model.dependsOn
      .filter((dep) => ctx.changedUsers(dep) !== null)
      .map(
        (dep) =>
          `SELECT ${id(by.group)}, CAST(${id(by.user)} AS VARCHAR) FROM ${id(dep)} SEMI JOIN ${GROUPS} ON ${id(by.group)} = g`,
      ),
    `SELECT ${id(by.group)}, CAST(${id(by.own)} AS VARCHAR) FROM ${id(model.name)} SEMI JOIN ${GROUPS} ON ${id(by.group)} = g`,
  ];
  const union = [...tables.map((t) => `SELECT g, u FROM ${t}`), ...(groups.size ? inGroups : [])];
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE ${USERS} AS
       SELECT DISTINCT CAST(g AS BIGINT) AS g, CAST(u AS VARCHAR) AS u
       FROM (${union.join(' UNION ALL ')}) AS x(g, u) WHERE u IS NOT NULL`,
  );
  return { users: await count(conn, USERS) };
}

/** SQL true for a row of `alias` of a dirty user (its group and user column). */
const isDirty = (alias: string, group: string, user: string) =>
  `EXISTS (SELECT 1 FROM ${USERS} AS d WHERE d.g = ${alias}.${id(group)} AND d.u = CAST(${alias}.${id(user)} AS VARCHAR))`;

/**
 * The dirty users' rows computed from theirs upstream (each upstream model with the user column narrowed to them),
 * then replaced; returns why it could not (nothing replaced), or undefined.
 */
async function rebuildUsers(
  conn: DuckDBConnection,
  model: Node,
  by: ByUser,
  groupWide: Map<string, string>,
): Promise<string | undefined> {
  const [{ d: catalog }] = (await conn.runAndReadAll('SELECT current_database() AS d')).getRowObjectsJson() as {
    d: string;
  }[];
  const narrowed: string[] = [];
  try {
    for (const dep of model.dependsOn) {
      if (!(await hasColumns(conn, dep, [by.group, by.user]))) continue;
      await conn.run(
        `CREATE OR REPLACE TEMP VIEW ${id(dep)} AS SELECT * FROM ${id(catalog)}.main.${id(dep)} AS t WHERE ${isDirty('t', by.group, by.user)}`,
      );
      narrowed.push(dep);
    }
    const sql = groupWide.size ? await withCtesFrom(conn, model.sql, groupWide) : stripTrailingSemicolon(model.sql);
    await conn.run(`CREATE OR REPLACE TEMP TABLE ${REBUILT} AS\n${sql}\n`);
  } finally {
    for (const dep of narrowed) await conn.run(`DROP VIEW IF EXISTS temp.${id(dep)}`);
  }
  const outside = await count(conn, `(SELECT 1 FROM ${REBUILT} AS r WHERE NOT ${isDirty('r', by.group, by.own)})`);
  if (outside > 0) return 'a row rebuilt fell outside the dirty users (fell back to a whole build)';
  await conn.run(`DELETE FROM ${id(model.name)} AS t WHERE ${isDirty('t', by.group, by.own)}`);
  await conn.run(`INSERT INTO ${id(model.name)} BY NAME SELECT * FROM ${REBUILT}`);
  return undefined;
}

async function buildWhole(conn: DuckDBConnection, model: Node, why: string): Promise<IncrementalOutcome> {
  await conn.run(`CREATE OR REPLACE TABLE ${id(model.name)} AS\n${stripTrailingSemicolon(model.sql)}\n`);
  return { rows: await count(conn, model.name), intervals: byUsers(0, why) };
}

/** A count and hash of a table's rows per group (`*`: rows of no group). */
async function perGroup(conn: DuckDBConnection, table: string, group: string): Promise<Record<string, string>> {
  if (!(await hasColumns(conn, table, [group])))
    throw new Error(`a group-wide CTE of the model has no column ${group}`);
  const r = await conn.runAndReadAll(
    `SELECT coalesce(CAST(t.${id(group)} AS VARCHAR), '*') AS g, ${rowDigestSql('t')} AS fp FROM ${table} AS t GROUP BY ALL`,
  );
  return Object.fromEntries((r.getRowObjectsJson() as { g: string; fp: string }[]).map((row) => [row.g, row.fp]));
}

async function hasColumns(conn: DuckDBConnection, table: string, columns: string[]): Promise<boolean> {
  const r = await conn.runAndReadAll(`SELECT column_name AS c FROM (DESCRIBE ${id(table)})`);
  const have = new Set((r.getRowObjectsJson() as { c: string }[]).map((row) => row.c));
  return columns.every((c) => have.has(c));
}

async function count(conn: DuckDBConnection, relation: string): Promise<number> {
  const from = relation.startsWith('(') ? `${relation} AS x` : id(relation);
  const r = await conn.runAndReadAll(`SELECT count(*) AS n FROM ${from}`);
  return Number(r.getRowObjectsJson()[0].n);
}
