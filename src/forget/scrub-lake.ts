/**
 * Clears a user's personal values in every lake file that holds them, one file at a time, each
 * rewritten under a new name and switched in for the old one (src/lake/rewrite.ts). Files without such
 * rows are not touched.
 */
import { sep } from 'node:path';
import {
  BIGINT,
  LIST,
  listValue,
  quotedIdentifier as id,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { countWhere, literalPath, personalKeySql, rewriteParquet, withLakeConnection } from '../lake/index.js';
import type { Identities } from './identities.js';
import { lakeFiles } from './lake-files.js';
import { PERSONAL_COLUMNS, type PersonalColumns } from './personal-columns.js';

export interface StreamScrub {
  files: number;
  rows: number;
}

/** `groups`: only the files of those groups' partitions (a worker that holds only their lock). */
export async function scrubLake(
  outDir: string,
  who: Identities,
  groups?: number[],
): Promise<Record<string, StreamScrub>> {
  const out: Record<string, StreamScrub> = {};
  // the ids of the user's orders, gathered from the orders files for the order history's rows
  const orders = new Set<bigint>();
  const params = () => ({
    ids: listValue(who.ids.map(BigInt)),
    keys: listValue(who.keys),
    orders: listValue([...orders]),
  });
  const types = { ids: LIST(BIGINT), keys: LIST(VARCHAR), orders: LIST(BIGINT) };
  const mine = (file: string) => !groups || groups.some((g) => file.includes(`${sep}organisation_group_id=${g}${sep}`));
  for (const spec of PERSONAL_COLUMNS) {
    const tally: StreamScrub = { files: 0, rows: 0 };
    for (const file of lakeFiles(outDir, spec.stream).filter(mine)) {
      const present = await columnsOf(file);
      const match = matchOf(spec, present);
      const clear = spec.columns.filter((c) => present.has(c));
      if (!match || !clear.length) continue;
      if (spec.stream === 'orders' && present.has('order_id'))
        for (const o of await orderIdsOf(file, match, params(), types)) orders.add(o);
      const rows = await countWhere(file, `(${match}) AND (${clear.map((c) => `${id(c)} IS NOT NULL`).join(' OR ')})`, {
        params: params(),
        types,
      });
      if (!rows) continue;
      const replace = clear.map((c) => `CASE WHEN (${match}) THEN NULL ELSE ${id(c)} END AS ${id(c)}`).join(', ');
      await rewriteParquet(outDir, spec.stream, file, {
        select: (source) => `SELECT * REPLACE (${replace}) FROM ${source}`,
        params: params(),
        types,
      });
      tally.files += 1;
      tally.rows += rows;
    }
    out[spec.stream] = tally;
  }
  return out;
}

/** The SQL condition that a row is the user's, over the columns the file has. */
function matchOf(spec: PersonalColumns, present: Set<string>): string | undefined {
  const parts: string[] = [];
  if (spec.byId && present.has(spec.byId)) parts.push(`list_contains($ids, TRY_CAST(${id(spec.byId)} AS BIGINT))`);
  if (spec.byEmail && present.has(spec.byEmail))
    parts.push(`list_contains($keys, ${personalKeySql(id(spec.byEmail))})`);
  if (spec.byOrderId && present.has(spec.byOrderId))
    parts.push(`list_contains($orders, TRY_CAST(${id(spec.byOrderId)} AS BIGINT))`);
  return parts.length ? parts.join(' OR ') : undefined;
}

/** The ids of the orders of `file` that are the user's (every one, whatever is still to clear in them). */
async function orderIdsOf(
  file: string,
  match: string,
  params: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
): Promise<bigint[]> {
  const sql = `SELECT DISTINCT TRY_CAST(order_id AS BIGINT) AS o FROM read_parquet($file) WHERE ${match}`;
  // only the parameters the query names: DuckDB refuses one it does not use
  const used = <T>(o: Record<string, T>) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => new RegExp(`\\$${k}\\b`).test(sql)));
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(sql, used({ file: literalPath(file), ...params }), used(types));
    return r
      .getRowObjectsJS()
      .map((x) => x.o)
      .filter((o): o is bigint => typeof o === 'bigint');
  });
}

async function columnsOf(file: string): Promise<Set<string>> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($file)', { file: literalPath(file) });
    return new Set((r.getRowObjectsJS() as { column_name: string }[]).map((x) => x.column_name));
  });
}
