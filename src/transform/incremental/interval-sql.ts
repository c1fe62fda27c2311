/**
 * The SQL of a build by intervals (incremental.ts), generated here and run elsewhere (interval-writer.ts,
 * fingerprints.ts): which rows a set of group-months (`<group>/<YYYY-MM>`) holds, and the statements that rebuild
 * and replace them through temporary tables. Apart from the deciding and the running, so that each statement's
 * text is read in one place.
 */
import { quotedIdentifier as id, quotedString as str } from '../../shared/duckdb.js';
import type { Intervals } from '../models/header.js';
import { stripTrailingSemicolon, type Node } from '../models/model-graph.js';
import { inMonths } from './month-range.js';

/** The dirty intervals (`g` BIGINT, `m` the month's first day). */
export const DIRTY = '_perks_dirty';
/** The dirty intervals' rows computed again. */
export const REBUILT = '_perks_rebuilt';
/** The keys of the rows rebuilt and of those they replace (a model read from the lake). */
export const KEYS = '_perks_keys';

/**
 * SQL true for the rows of `t` in the group-months `intervals` (`<group>/<YYYY-MM>`): a range of days each,
 * within the range from the first month to the last. That outer range comes first because DuckDB skips row
 * groups by a plain range (zone maps) but not by a disjunction of ranges: a scan of 2 months of 52 in a
 * 4 M-row mart 0.17 → 0.02 CPU-s. `edges`: each range from the last day of the month before to the first day of
 * the month after.
 */
export function inIntervals(iv: Intervals, intervals: Set<string>, edges = false): string {
  if (intervals.size === 0) return 'false';
  const time = `t.${id(iv.time)}`;
  const range = edges ? withEdges : inMonths;
  const ranges = [...intervals].map((interval) => {
    const [g, month] = interval.split('/');
    return `(t.${id(iv.group)} = ${Number(g)} AND ${range(time, month, month)})`;
  });
  const months = [...intervals].map((interval) => interval.slice(interval.indexOf('/') + 1)).sort();
  return `(${range(time, months[0], months[months.length - 1])}) AND (${ranges.join(' OR ')})`;
}

/** `month` (`YYYY-MM`) moved by `n` months. */
export function monthPlus(month: string, n: number): string {
  const [year, m] = month.split('-').map(Number);
  const at = m - 1 + n;
  return `${year + Math.floor(at / 12)}-${String((((at % 12) + 12) % 12) + 1).padStart(2, '0')}`;
}

/** SQL true for `column` (a DATE) from the last day of the month before `first` to the first day after `last`. */
function withEdges(column: string, first: string, last: string): string {
  const from = new Date(`${first}-01T00:00:00Z`);
  from.setUTCDate(0);
  return `${column} >= DATE ${str(from.toISOString().slice(0, 10))} AND ${column} < DATE ${str(`${monthPlus(last, 1)}-02`)}`;
}

/**
 * The model built whole, stored in month order: a month's rows then sit in a few row groups, whose zone maps let
 * a later build's reads of some months (deletes, re-hashes, exports, the narrowed views) skip the rest.
 */
export function wholeTableSql(model: Node): string {
  const time = id(model.header.incremental!.time);
  return `CREATE OR REPLACE TABLE ${id(model.name)} AS\nSELECT * FROM (\n${stripTrailingSemicolon(model.sql)}\n) ORDER BY ${time}\n`;
}

export const DIRTY_TABLE_SQL = `CREATE OR REPLACE TEMP TABLE ${DIRTY} (g BIGINT, m DATE)`;
/** One dirty interval into DIRTY (parameters `g`, `m` as `YYYY-MM`). */
export const DIRTY_ROW_SQL = `INSERT INTO ${DIRTY} VALUES ($g::BIGINT, ($m || '-01')::DATE)`;

/** The dirty intervals' rows computed by the model's SQL (its upstream narrowed to them). */
export const rebuiltSql = (model: Node): string =>
  `CREATE OR REPLACE TEMP TABLE ${REBUILT} AS\n${stripTrailingSemicolon(model.sql)}\n`;

/** SQL true for a row of `alias` in a dirty interval (DIRTY as d). */
function onDirty(model: Node, alias: string): string {
  const inc = model.header.incremental!;
  const month = `CAST(date_trunc('month', ${id(alias)}.${id(inc.time)}) AS DATE)`;
  return `${id(alias)}.${id(inc.group)} = d.g AND ${month} = d.m`;
}

const keyColumns = (model: Node): string => model.header.key!.map((k) => id(k)).join(', ');

/** How many rows rebuilt fall outside the dirty intervals (column `n`). */
export const outsideSql = (model: Node): string =>
  `SELECT count(*) AS n FROM ${REBUILT} AS r ANTI JOIN ${DIRTY} AS d ON ${onDirty(model, 'r')}`;

/** KEYS: the keys of the rows rebuilt and of the model's rows in the dirty intervals. */
export function keysSql(model: Node): string {
  const cols = keyColumns(model);
  return (
    `CREATE OR REPLACE TEMP TABLE ${KEYS} AS SELECT ${cols} FROM ${REBUILT} ` +
    `UNION SELECT ${cols} FROM ${id(model.name)} AS t SEMI JOIN ${DIRTY} AS d ON ${onDirty(model, 't')}`
  );
}

/** How many rows of the lake view `view` (narrowed to the clean group-months' files) hold a key of KEYS. */
export const sharedKeysSql = (model: Node, view: string): string =>
  `SELECT count(*) AS n FROM ${id(view)} SEMI JOIN ${KEYS} USING (${keyColumns(model)})`;

/**
 * An upstream model that declares its intervals seen with only the dirty intervals' rows: a temporary view of the
 * same name (searched before the warehouse's tables), from the last day of the month before each dirty month to
 * the first day of the month after when `edges`.
 */
export const narrowedModelSql = (catalog: string, dep: string, iv: Intervals, dirty: Set<string>, edges: boolean) =>
  `CREATE OR REPLACE TEMP VIEW ${id(dep)} AS SELECT * FROM ${id(catalog)}.main.${id(dep)} AS t WHERE ${inIntervals(iv, dirty, edges)}`;

export const widenedModelSql = (dep: string): string => `DROP VIEW IF EXISTS temp.${id(dep)}`;

/** The dirty intervals' rows deleted (ranges of days: the zone maps skip the rest). */
export const deleteIntervalsSql = (model: Node, dirty: Set<string>): string =>
  `DELETE FROM ${id(model.name)} AS t WHERE ${inIntervals(model.header.incremental!, dirty)}`;

/** The rows rebuilt inserted, in month order. */
export const insertRebuiltSql = (model: Node): string =>
  `INSERT INTO ${id(model.name)} BY NAME SELECT * FROM ${REBUILT} ORDER BY ${id(model.header.incremental!.time)}`;

/**
 * `table`: the users (`g`, `u`) of the dirty intervals' rows that differ from the ones rebuilt, either way: each
 * row's hash counted +1 on the old side and -1 on the new, grouped by user and hash.
 */
export function changedUsersSql(
  table: string,
  model: Node,
  dirty: Set<string>,
  watch: { group: string; user: string },
): string {
  const side = (from: string, sign: number) =>
    `SELECT CAST(t.${id(watch.group)} AS BIGINT) AS g, CAST(t.${id(watch.user)} AS VARCHAR) AS u, hash(t) AS h, ${sign} AS side FROM ${from}`;
  return `CREATE OR REPLACE TEMP TABLE ${table} AS
       SELECT DISTINCT g, u FROM (
         ${side(`${id(model.name)} AS t WHERE ${inIntervals(model.header.incremental!, dirty)}`, 1)}
         UNION ALL ${side(`${REBUILT} AS t`, -1)}
       ) GROUP BY g, u, h HAVING sum(side) <> 0`;
}
