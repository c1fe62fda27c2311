/**
 * Clears a user's personal values in every lake file that holds them. Which files hold them is asked of
 * each stream's files at once (one query per stream, not one per file: at a few hundred files the
 * per-file queries cost a run about a second); each file that does is rewritten under a new name and
 * switched in for the old one (src/lake/rewrite.ts). Files without such rows are not touched.
 */
import {
  BIGINT,
  LIST,
  listValue,
  quotedIdentifier as id,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '../shared/duckdb.js';
import {
  inGroups,
  literalPath,
  personalKeySql,
  rewriteParquet,
  scanSql,
  streamFiles,
  usedParameters,
  withLakeConnection,
} from '../lake/index.js';
import type { Identities } from './identities.js';
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
  // `emails`: the stream's email values whose key is the user's (see emailsOf)
  const paramsWith = (emails: string[]) => ({
    ids: listValue(who.ids.map(BigInt)),
    emails: listValue(emails),
    orders: listValue([...orders]),
  });
  const types = { ids: LIST(BIGINT), emails: LIST(VARCHAR), orders: LIST(BIGINT) };
  const mine = (file: string) => !groups || inGroups(file, groups);
  for (const spec of PERSONAL_COLUMNS) {
    const tally: StreamScrub = { files: 0, rows: 0 };
    out[spec.stream] = tally;
    const files = streamFiles(outDir, spec.stream).filter(mine);
    if (!files.length) continue;
    const list = listValue(files.map(literalPath));
    const stream: StreamFiles = { list, columns: await columnsOf(list, true) };
    const emails = spec.byEmail ? await emailsOf(stream, spec.byEmail, who.keys) : [];
    const holding = await filesHolding(spec, stream, paramsWith(emails), types);
    for (const h of holding) for (const o of h.orders) orders.add(o);
    for (const { file, rows } of holding.filter((h) => h.rows > 0)) {
      // the file's own columns: a column another file of the stream has is not in this one
      const present = await columnsOf(literalPath(file), false);
      const match = matchOf(spec, present)!;
      const clear = spec.columns.filter((c) => present.has(c));
      const replace = clear.map((c) => `CASE WHEN (${match}) THEN NULL ELSE ${id(c)} END AS ${id(c)}`).join(', ');
      await rewriteParquet(outDir, spec.stream, file, {
        select: (source) => `SELECT * REPLACE (${replace}) FROM ${source}`,
        params: paramsWith(emails),
        types,
      });
      tally.files += 1;
      tally.rows += rows;
    }
  }
  return out;
}

/** A stream's files, as one list for read_parquet, and their columns read by name across them. */
interface StreamFiles {
  list: DuckDBValue;
  columns: Set<string>;
}

/** The SQL condition that a row is the user's, over the columns the file has. */
function matchOf(spec: PersonalColumns, present: Set<string>): string | undefined {
  const parts: string[] = [];
  if (spec.byId && present.has(spec.byId)) parts.push(`list_contains($ids, TRY_CAST(${id(spec.byId)} AS BIGINT))`);
  if (spec.byEmail && present.has(spec.byEmail))
    parts.push(`list_contains($emails, CAST(${id(spec.byEmail)} AS VARCHAR))`);
  if (spec.byOrderId && present.has(spec.byOrderId))
    parts.push(`list_contains($orders, TRY_CAST(${id(spec.byOrderId)} AS BIGINT))`);
  return parts.length ? parts.join(' OR ') : undefined;
}

/**
 * The values of the `column` of `files` whose personal key is one of `keys`. A row's key is a SHA-256 of the
 * trimmed lower-case value (personalKeySql): at 10 M orders, about 16 s to compute for every row in each scan,
 * and again in each rewrite. Computed once per distinct value (2 M e-mails at 10 M orders: 5 s), the rows are
 * then matched by the values themselves, which selects the same rows.
 */
async function emailsOf(stream: StreamFiles, column: string, keys: string[]): Promise<string[]> {
  if (!keys.length || !stream.columns.has(column)) return [];
  return withLakeConnection(async (c) => {
    // a table, not a subquery: DuckDB would push the key's filter below the DISTINCT, into every row
    await c.run(
      `CREATE TEMP TABLE distinct_values AS SELECT DISTINCT CAST(${id(column)} AS VARCHAR) AS v
       FROM ${scanSql('$files', { hive: false })} WHERE ${id(column)} IS NOT NULL`,
      { files: stream.list },
      { files: LIST(VARCHAR) },
    );
    const r = await c.runAndReadAll(
      `SELECT v FROM distinct_values WHERE list_contains($keys, ${personalKeySql('v')}) ORDER BY v`,
      { keys: listValue(keys) },
      { keys: LIST(VARCHAR) },
    );
    return (r.getRowObjectsJS() as { v: string }[]).map((x) => x.v);
  });
}

interface Holding {
  file: string;
  /** The user's rows with a personal value still to clear. */
  rows: number;
  /** The ids of the user's orders in the file (orders only), whatever is still to clear in them. */
  orders: bigint[];
}

/** Column the stream-wide read names each row's file by (a lake column never starts with `_perks`). */
const FILE_COLUMN = '_perks_file';

/**
 * The files of `spec.stream` that hold rows of the user, in one read of them all. Their columns are read by
 * name across the files (a file without a column reads it as NULL), which selects the same rows as each
 * file's own columns would: a condition on a column the file lacks is NULL, never true.
 */
async function filesHolding(
  spec: PersonalColumns,
  stream: StreamFiles,
  params: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
): Promise<Holding[]> {
  const source = scanSql('$files', { hive: false, filename: FILE_COLUMN });
  const present = stream.columns;
  const match = matchOf(spec, present);
  const clear = spec.columns.filter((c) => present.has(c));
  if (!match || !clear.length) return [];
  const withOrders = spec.stream === 'orders' && present.has('order_id');
  const sql = `SELECT ${FILE_COLUMN} AS file,
      count(*) FILTER (WHERE ${clear.map((c) => `${id(c)} IS NOT NULL`).join(' OR ')})::BIGINT AS n,
      ${withOrders ? 'list(DISTINCT TRY_CAST(order_id AS BIGINT))' : '[]::BIGINT[]'} AS o
    FROM ${source} WHERE ${match} GROUP BY ALL ORDER BY file`;
  const [values, valueTypes] = usedParameters(
    sql,
    { files: stream.list, ...params },
    { files: LIST(VARCHAR), ...types },
  );
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(sql, values, valueTypes);
    return (r.getRowObjectsJS() as { file: string; n: bigint; o: (bigint | null)[] }[]).map((x) => ({
      file: x.file,
      rows: Number(x.n),
      orders: x.o.filter((o): o is bigint => typeof o === 'bigint'),
    }));
  });
}

/** The columns of `files` (a path, or a list of paths matched by name when `unionByName`). */
async function columnsOf(files: string | DuckDBValue, unionByName: boolean): Promise<Set<string>> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `DESCRIBE SELECT * FROM ${scanSql('$files', { hive: false, unionByName })}`,
      { files },
      typeof files === 'string' ? { files: VARCHAR } : { files: LIST(VARCHAR) },
    );
    return new Set((r.getRowObjectsJS() as { column_name: string }[]).map((x) => x.column_name));
  });
}
