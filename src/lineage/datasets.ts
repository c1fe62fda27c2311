/**
 * Dataset names as the OpenLineage naming spec says (https://openlineage.io/docs/spec/naming): a store's files
 * are namespace `s3://<bucket>`, name the object's path; a local folder's files are `file://<host>`, name the
 * absolute path; the API is its own namespace (its base URL), one dataset per stream; the warehouse's tables are
 * `duckdb://<host><path of warehouse.duckdb>` (a store's: `duckdb://<bucket>/<key>`), name `warehouse.main.<table>`.
 * docs/reference/lineage.md lists them.
 */
import { hostname } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { relativeStreamDir } from '../lake/index.js';
import type { Dataset } from './events.js';

/** Where a command's output is, as datasets are named. */
export interface Place {
  /** The folder the command reads and writes (a store's working copy). */
  readonly dir: string;
  /** `file://<host>`, or `s3://<bucket>`. */
  readonly files: string;
  /** The output's root as a name in `files`: an absolute path, or the store's prefix ('' at the bucket's root). */
  readonly root: string;
  /** The warehouse's namespace. */
  readonly warehouse: string;
  /** The API's base URL (none: no API configured). */
  readonly api?: string;
}

/**
 * The place of an output: `dir` is the folder worked in, `given` the output as given (an s3:// URL for a store,
 * whose working copy `dir` is), `api` the API's base URL.
 */
export function placeOf(dir: string, given: string, api?: string): Place {
  const store = /^s3:\/\/([^/]+)\/?(.*)$/.exec(given);
  const apiBase = api?.replace(/\/+$/, '');
  if (store) {
    const [, bucket, prefix] = store;
    const root = prefix.replace(/\/+$/, '');
    const key = root ? `${root}/warehouse.duckdb` : 'warehouse.duckdb';
    return { dir: resolve(dir), files: `s3://${bucket}`, root, warehouse: `duckdb://${bucket}/${key}`, api: apiBase };
  }
  const host = hostname() || 'localhost';
  const root = resolve(dir);
  return {
    dir: root,
    files: `file://${host}`,
    root,
    warehouse: `duckdb://${host}${root}/warehouse.duckdb`,
    api: apiBase,
  };
}

/** A file or folder of the output, by its path relative to the output (`marts/revenue_monthly.parquet`). */
export function outputFile(place: Place, rel: string): Dataset {
  const clean = rel.split(sep).join('/').replace(/^\/+/, '');
  return { namespace: place.files, name: place.root ? `${place.root}/${clean}` : clean };
}

/** A file the command wrote, by its path on this machine (under the output's folder). */
export function writtenFile(place: Place, path: string): Dataset {
  const rel = relative(place.dir, resolve(path));
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  return inside ? outputFile(place, rel) : { namespace: `file://${hostname() || 'localhost'}`, name: resolve(path) };
}

/** A stream of the lake: its folder. */
export const lakeStream = (place: Place, stream: string): Dataset => outputFile(place, relativeStreamDir(stream));

/** A table of the warehouse (a model). */
export const warehouseTable = (place: Place, table: string): Dataset => ({
  namespace: place.warehouse,
  name: `warehouse.main.${table}`,
});

/** A stream of the API (none without an API configured). */
export const apiStream = (place: Place, stream: string): Dataset[] =>
  place.api ? [{ namespace: place.api, name: stream }] : [];
