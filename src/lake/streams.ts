/**
 * Where each stream's files are and how a query reads them: the lake's layout for every stage that reads it
 * (`<out>/lake/<stream>/organisation_group_id=<group>/…/*.parquet`, Hive-partitioned), so that a change of
 * layout is made here, not in each reader. scripts/check-layers.mjs refuses a lake path or a
 * `hive_partitioning` read outside src/lake.
 */
import { join } from 'node:path';
import { quotedString } from '../shared/duckdb.js';
import { globUnder, lakeRoot, literalPath, safeIdentifier } from './paths.js';

/** The partition key of a stream's group folders. */
export const GROUP_KEY = 'organisation_group_id';

/** The group's partition folder name, `organisation_group_id=<group>`. */
export const groupPartition = (group: number | string): string => `${GROUP_KEY}=${group}`;

/** `<out>/lake/<stream>`, or one group's folder of it. */
export function streamDir(outDir: string, stream: string, group?: number | string): string {
  const dir = join(lakeRoot(outDir), safeIdentifier('stream name', stream));
  return group === undefined ? dir : join(dir, groupPartition(group));
}

/** The stream's folder relative to the output directory (`lake/orders`): what views read through `file_search_path`. */
export const relativeStreamDir = (stream: string): string => `lake/${safeIdentifier('stream name', stream)}`;

/** A glob of every Parquet file of the stream (or one group's), the output folder's name taken literally. */
export function streamGlob(outDir: string, stream: string, group?: number | string): string {
  return globUnder(streamDir(outDir, stream, group), '**', '*.parquet');
}

export interface ScanOptions {
  /** Partition columns from the folder names (default true). */
  hive?: boolean;
  /** Columns matched by name across files that differ (default true). */
  unionByName?: boolean;
  /** false: partition values stay text (DuckDB would guess their types). */
  autocast?: false;
  /** A column naming each row's file. */
  filename?: string;
}

/** `read_parquet(<source>, …)`: `source` a parameter (`$glob`), a quoted path or a list of them. */
export function scanSql(source: string, options: ScanOptions = {}): string {
  const settings = [
    `hive_partitioning = ${options.hive ?? true}`,
    ...((options.unionByName ?? true) ? ['union_by_name = true'] : []),
    ...(options.autocast === false ? ['hive_types_autocast = false'] : []),
    ...(options.filename ? [`filename = '${options.filename.replace(/'/g, "''")}'`] : []),
  ];
  return `read_parquet(${source}, ${settings.join(', ')})`;
}

/** `read_parquet` of a list of lake files (streamFiles, snapshotsOf, …), each taken literally. */
export function scanFilesSql(files: string[], options: ScanOptions = {}): string {
  return scanSql(`[${files.map((f) => quotedString(literalPath(f))).join(', ')}]`, options);
}
