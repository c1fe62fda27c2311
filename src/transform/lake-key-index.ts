/**
 * The lake's keys by group-month, kept in the warehouse for a model read from the lake by intervals
 * (incremental.ts): per lake partition, the hash of each row's key and of each lookup expression. Two
 * questions of an incremental build were answered by scanning every clean group-month's files, whatever
 * changed: which months hold an order of an email whose user changed (a lookup), and whether a key rebuilt
 * is also in a clean month. At 10 M orders that was ~3 CPU-s of a next-day build of ~24; the index answers
 * both from integers in the warehouse, and is refreshed only for the partitions whose files changed (their
 * fingerprint: names and sizes), which the build reads anyway.
 *
 * Hashes, not values: a collision can only make a month dirty that is not (rebuilt for nothing) or send a
 * model to a whole build, never skip a change. Keys and expressions are hashed as text, so a lake column's
 * integer type never decides a match.
 */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import type { Partition } from './lake-partitions.js';
import { lakeViewName } from './lake-streams.js';
import { narrowLakeView } from './lake-views.js';
import type { Node } from './model-graph.js';

/** The index of `model` in the warehouse (its name starts `_build_`: bookkeeping, never compared or exported). */
export const lakeKeyTable = (model: string): string => `_build_lake_keys_${model}`;

/** A lake partition of a stream: `<stream>/<group>/<YYYY-MM>`, as the build state keys them. */
export type StreamPartition = Partition & { stream: string };

/** The SQL hash of a key's columns (alias `alias`), as text. */
export const keyHash = (key: string[], alias: string): string =>
  `hash(row(${key.map((k) => `CAST(${alias}.${id(k)} AS VARCHAR)`).join(', ')}))`;

/**
 * Brings the index of `model` up to the lake's partitions now: rows of partitions gone or changed are dropped,
 * partitions new or changed are read (only their files). `rebuild`: dropped and read whole (a whole build, whose
 * key or lookups may have changed with its SQL). Returns how many partitions it read.
 */
export async function refreshLakeKeys(
  conn: DuckDBConnection,
  outDir: string,
  model: Node,
  partitions: Map<string, StreamPartition>,
  rebuild: boolean,
): Promise<number> {
  const table = id(lakeKeyTable(model.name));
  const lookups = model.header.incremental!.lookups;
  if (rebuild) await conn.run(`DROP TABLE IF EXISTS ${table}`);
  const lookupCols = lookups.map((_, n) => `, l${n} UBIGINT`).join('');
  await conn.run(`CREATE TABLE IF NOT EXISTS ${table} (part VARCHAR, fp VARCHAR, g VARCHAR, k UBIGINT${lookupCols})`);
  const had = new Map(
    (
      (await conn.runAndReadAll(`SELECT DISTINCT part, fp FROM ${table}`)).getRowObjectsJson() as {
        part: string;
        fp: string;
      }[]
    ).map((r) => [r.part, r.fp]),
  );
  const gone = [...had].filter(([part, fp]) => partitions.get(part)?.fingerprint !== fp).map(([part]) => part);
  if (gone.length) await conn.run(`DELETE FROM ${table} WHERE part IN (${gone.map(str).join(', ')})`);
  const read = [...partitions].filter(([part, p]) => had.get(part) !== p.fingerprint);
  const hashes = lookups.map((l, n) => `, hash(CAST((${l.expression}) AS VARCHAR)) AS l${n}`).join('');
  const streams = new Set<string>();
  try {
    for (const [part, p] of read) {
      streams.add(p.stream);
      await narrowLakeView(conn, outDir, p.stream, p.files);
      await conn.run(
        `INSERT INTO ${table} SELECT ${str(part)}, ${str(p.fingerprint)}, ${str(p.group)}, ${keyHash(model.header.key!, 't')}${hashes}
         FROM ${id(lakeViewName(p.stream))} AS t`,
      );
    }
  } finally {
    for (const s of streams) await narrowLakeView(conn, outDir, s, 'all');
  }
  return read.length;
}

/**
 * The intervals (`<group>/<YYYY-MM>`, not in `dirty`) whose lake rows match a changed lookup key: `changed` is a
 * table of (g, h) pairs, a group and the hash of a key of lookup number `n`.
 */
export async function intervalsMatching(
  conn: DuckDBConnection,
  model: string,
  n: number,
  changed: string,
  dirty: Set<string>,
): Promise<string[]> {
  const r = await conn.runAndReadAll(
    `SELECT DISTINCT part FROM ${id(lakeKeyTable(model))} AS i SEMI JOIN ${id(changed)} AS c
       ON i.g = CAST(c.g AS VARCHAR) AND i.l${n} = c.h`,
  );
  return (r.getRowObjectsJson() as { part: string }[])
    .map((row) => row.part.slice(row.part.indexOf('/') + 1))
    .filter((interval) => !dirty.has(interval));
}

/** How many keys of `keys` (a table of the model's key columns) the rows of a clean group-month hold. */
export async function keysInCleanPartitions(
  conn: DuckDBConnection,
  model: Node,
  keys: string,
  streams: string[],
  dirty: Set<string>,
): Promise<number> {
  const dirtyParts = streams.flatMap((s) => [...dirty].map((interval) => str(`${s}/${interval}`)));
  const clean = dirtyParts.length ? `i.part NOT IN (${dirtyParts.join(', ')}) AND` : '';
  const r = await conn.runAndReadAll(
    `SELECT count(*) AS n FROM ${id(lakeKeyTable(model.name))} AS i
     WHERE ${clean} i.k IN (SELECT ${keyHash(model.header.key!, 'k')} FROM ${id(keys)} AS k)`,
  );
  return Number(r.getRowObjectsJson()[0].n);
}
