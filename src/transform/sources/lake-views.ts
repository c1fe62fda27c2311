/**
 * One view per lake stream, `lake_<stream>`, over the lake's path RELATIVE to the output directory
 * (`lake/orders/**\/*.parquet`), resolved through DuckDB's `file_search_path`, which every reader sets to
 * the output directory ({@link useOutputDir}). A moved or copied `output/` reads its own lake, never the
 * folder it was built in; and the output directory's own name is never read as a glob pattern (DuckDB
 * does not glob the search path: `out[r]` reads `out[r]`, not `outr`). A BI tool opening the warehouse
 * runs `SET file_search_path = '<out>'` first, or starts in `<out>`. Every view has the contract's columns with the contract's
 * types, whatever the files hold: partition columns are cast from the path explicitly, a column the
 * files lack is a typed NULL (or, once declared, its value in the `_extra` column of records landed before:
 * a promoted field), extra columns ride along (union_by_name), and a stream with no files yet is an empty
 * typed relation rather than an error.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import { ConfigError } from '../../shared/exit-codes.js';
import { damagedFiles, relativeStreamDir, repairCommand, scanSql, streamDir } from '../../lake/index.js';
import { firstLine, LakeReadError } from '../errors.js';
import { LAKE_STREAMS, lakeViewName, type LakeColumn, type LakeStream } from './lake-streams.js';

export interface LakeView {
  view: string;
  stream: string;
  /** How many Parquet files the view reads (0: an empty typed relation). */
  files: number;
}

/**
 * Creates (or replaces) the lake views on `conn` and says how many files each one reads;
 * `lakeDir` null gives every view empty (for the data dictionary). `streams`: the contract's, unless a
 * test declares a field the resources do not (yet).
 */
export async function createLakeViews(
  conn: DuckDBConnection,
  lakeDir: string | null,
  streams: readonly LakeStream[] = LAKE_STREAMS,
): Promise<LakeView[]> {
  const views: LakeView[] = [];
  if (lakeDir !== null) await useOutputDir(conn, dirname(resolve(lakeDir)));
  for (const stream of streams) {
    const dir = lakeDir === null ? '' : resolve(lakeDir, stream.name);
    const files = lakeDir === null ? 0 : countParquet(dir);
    const view = lakeViewName(stream.name);
    try {
      const body =
        files === 0
          ? emptyRelation(stream)
          : await typedScan(conn, stream, `${basename(resolve(lakeDir!))}/${stream.name}`);
      await conn.run(`CREATE OR REPLACE VIEW ${id(view)} AS ${body}`);
    } catch (err) {
      throw new LakeReadError(
        `the lake stream ${stream.name} (${dir}) cannot be read: ${firstLine(err)}${repairHint(dirname(resolve(lakeDir!)), stream.name, dir)}`,
      );
    }
    views.push({ view, stream: stream.name, files });
  }
  return views;
}

/** The damaged files of a stream, each with the command that repairs it (none found: ''). */
export function repairHint(outDir: string, stream: string, dir: string): string {
  const damaged = damagedFiles(dir);
  if (!damaged.length) return '';
  const more =
    damaged.length > 1
      ? ` (and ${damaged.length - 1} more damaged files of ${stream}; the next \`perks extract\` re-extracts every damaged window)`
      : '';
  return `; damaged: ${damaged[0]}; repair: ${repairCommand(outDir, stream, damaged[0])}${more}`;
}

export const lakeViewNames = (): string[] => LAKE_STREAMS.map((s) => lakeViewName(s.name));

function countParquet(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.parquet')).length;
  } catch {
    return 0;
  }
}

const allColumns = (s: LakeStream): LakeColumn[] => [...s.partitions, ...s.columns];
const isNested = (type: string) => /STRUCT|\[\]|MAP/.test(type);

function emptyRelation(stream: LakeStream): string {
  return `SELECT ${allColumns(stream)
    .map((c) => `CAST(NULL AS ${c.type}) AS ${id(c.name)}`)
    .join(', ')} LIMIT 0`;
}

/**
 * Points the connection's relative file paths (the lake views') at `outDir`. DuckDB splits the search
 * path at commas, so an output directory with a comma in its name cannot be one (config refuses it).
 */
export async function useOutputDir(conn: DuckDBConnection, outDir: string): Promise<void> {
  const dir = resolve(outDir);
  if (dir.includes(','))
    throw new ConfigError(
      `the output directory ${JSON.stringify(dir)} has a comma in its name, which DuckDB cannot search: choose another PERKS_OUTPUT`,
    );
  await conn.run('SET file_search_path = $dir', { dir });
}

/**
 * Replaces one lake view by the same typed view over `files` alone (paths relative to the output directory,
 * `lake/orders/…/x.parquet`): what an incremental model reads for its dirty intervals (incremental.ts).
 * `'all'`: the whole stream again.
 */
export async function narrowLakeView(
  conn: DuckDBConnection,
  outDir: string,
  streamName: string,
  files: string[] | 'all',
): Promise<void> {
  const stream = LAKE_STREAMS.find((s) => s.name === streamName);
  if (!stream) throw new Error(`no lake stream ${streamName}`);
  const whole = files === 'all' && countParquet(streamDir(resolve(outDir), stream.name)) > 0;
  const body = whole
    ? await typedScan(conn, stream, relativeStreamDir(stream.name))
    : files === 'all' || files.length === 0
      ? emptyRelation(stream)
      : await typedScan(conn, stream, files);
  await conn.run(`CREATE OR REPLACE VIEW ${id(lakeViewName(stream.name))} AS ${body}`);
}

/** `relativeDir`: the stream's folder relative to the output directory (`lake/orders`), or a list of its files. */
async function typedScan(conn: DuckDBConnection, stream: LakeStream, relativeDir: string | string[]): Promise<string> {
  // Partition values stay text (no autocast): the casts below are the one place they get their type.
  const paths = Array.isArray(relativeDir)
    ? `[${relativeDir.map(str).join(', ')}]`
    : str(`${relativeDir}/**/*.parquet`);
  const source = scanSql(paths, { autocast: false });
  const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
  const present = (described.getRowObjectsJson() as { column_name: string }[]).map((r) => r.column_name);
  const presentLower = new Set(present.map((n) => n.toLowerCase()));
  const known = allColumns(stream);
  const extras = presentLower.has('_extra') && !stream.partitions.some((p) => p.name === '_extra');
  const select = known.map((c) => {
    // A field declared after records carrying it were landed (promoted) is read from their _extra.
    const promoted = extras && c.name !== '_extra' && !stream.partitions.includes(c);
    const fromExtra = `TRY_CAST(_extra->${isNested(c.type) ? '' : '>'}${str(c.name)} AS ${c.type})`;
    if (!presentLower.has(c.name.toLowerCase()))
      return `${promoted ? fromExtra : `CAST(NULL AS ${c.type})`} AS ${id(c.name)}`;
    // Nested values keep their file type: a cast would fail on a struct that gained a field.
    if (isNested(c.type)) return id(c.name);
    const typed = `CAST(${id(c.name)} AS ${c.type})`;
    return `${promoted ? `coalesce(${typed}, ${fromExtra})` : typed} AS ${id(c.name)}`;
  });
  const knownNames = new Set(known.map((c) => c.name.toLowerCase()));
  const extra = present.filter((n) => !knownNames.has(n.toLowerCase())).map(id);
  return `SELECT ${[...select, ...extra].join(', ')} FROM ${source}`;
}
