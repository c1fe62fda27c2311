/**
 * The digest queries of a build by intervals: the count and hash of an upstream model's rows per group-month (or
 * per group), and of an `edges:` model's rows on a month's first and last days. Generated here; run, and merged
 * with the previous build's, by fingerprints.ts.
 */
import { quotedIdentifier as id } from '../../shared/duckdb.js';
import type { Intervals } from '../models/header.js';
import { inIntervals } from './interval-sql.js';
import { rowDigestSql } from './row-digest.js';

/** Whether `table` has the column `$group` (column `n`: 1 or 0). */
export const hasColumnSql = (table: string): string =>
  `SELECT count(*) AS n FROM (DESCRIBE ${id(table)}) WHERE column_name = $group`;

/**
 * The count and hash of `table`'s rows (columns `g`, `fp`): per group-month when it declares its intervals `iv`,
 * else per group when it has the column `group` (`byGroup`), else `*`; rows of no group or month under `*`.
 * `replaced`: of the rows in those intervals only.
 */
export function digestSql(
  table: string,
  group: string,
  { iv, byGroup, replaced }: { iv?: Intervals; byGroup: boolean; replaced?: Set<string> },
): string {
  const only = replaced ? `WHERE ${inIntervals(iv!, replaced)}` : '';
  const g = iv
    ? `coalesce(CAST(t.${id(iv.group)} AS VARCHAR) || '/' || strftime(t.${id(iv.time)}, '%Y-%m'), '*')`
    : byGroup
      ? `coalesce(CAST(t.${id(group)} AS VARCHAR), '*')`
      : `'*'`;
  return `SELECT ${g} AS g, ${rowDigestSql('t')} AS fp FROM ${id(table)} AS t ${only} GROUP BY ALL`;
}

/**
 * An `edges:` model's digest per group-month (`g`, `fp`) and of its rows on a month's first day (`first`) and on
 * its last (`last`; null when none), in one scan; `replaced`: of the rows in those intervals only.
 */
export function digestWithEdgesSql(table: string, iv: Intervals, replaced: Set<string> | undefined): string {
  const time = `t.${id(iv.time)}`;
  return `SELECT coalesce(CAST(t.${id(iv.group)} AS VARCHAR) || '/' || strftime(${time}, '%Y-%m'), '*') AS g,
         ${rowDigestSql('t')} AS fp, ${edgeDigestSql('t', `day(${time}) = 1`)} AS first,
         ${edgeDigestSql('t', `${time} = last_day(${time})`)} AS last
       FROM ${id(table)} AS t ${replaced ? `WHERE ${inIntervals(iv, replaced)}` : ''} GROUP BY ALL`;
}

/**
 * An `edges:` model's digest of its rows on a month's first day and of those on its last day (`day`: `first` or
 * `last`), per group-month (`g`, `fp`): one scan of its rows on those days (`replaced`: in those intervals).
 */
export function edgeDigestsSql(table: string, iv: Intervals, replaced: Set<string> | undefined): string {
  const time = `t.${id(iv.time)}`;
  return `SELECT CASE WHEN day(${time}) = 1 THEN 'first' ELSE 'last' END AS day,
           CAST(t.${id(iv.group)} AS VARCHAR) || '/' || strftime(${time}, '%Y-%m') AS g, ${rowDigestSql('t')} AS fp
         FROM ${id(table)} AS t
         WHERE ${replaced ? `(${inIntervals(iv, replaced)}) AND ` : ''}(day(${time}) = 1 OR ${time} = last_day(${time}))
           AND t.${id(iv.group)} IS NOT NULL
         GROUP BY ALL`;
}

/** rowDigestSql of the rows where `condition` holds, null when none does. */
function edgeDigestSql(alias: string, condition: string): string {
  const where = `FILTER (WHERE ${condition})`;
  return `CASE WHEN count(*) ${where} > 0 THEN count(*) ${where} || ':' || bit_xor(hash(hash(${alias}))) ${where} END`;
}
