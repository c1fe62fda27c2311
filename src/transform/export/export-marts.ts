/**
 * The marts to Parquet, for BI tools: written under temporary names, swapped in with the warehouse. A mart's
 * whole file is kept as it is when its rows are the previous build's and the file is the one that build
 * wrote (the token in its footer): a rerun with nothing new rewrites no file, and the object store moves none.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import { removeStaleTemps, tempPathFor, type FileChange } from './atomic-files.js';
import { firstLine } from '../errors.js';
import { stageMonthFolder, type MonthFolder } from './export-months.js';
import type { Node } from '../models/model-graph.js';
import { countRows, type MonthFiles, type StepResult } from '../runner/run-models.js';

/** How a mart built by months is exported: one whole file, a folder of month files, or both (DEFAULTS.build.martLayout). */
export type MartLayout = 'file' | 'months' | 'both';

export interface ExportedMarts {
  steps: StepResult[];
  /** One path per mart a reader opens: its file, or its month files' glob (`marts/<mart>/*.parquet`). */
  outputs: string[];
  /** Mart → the token its whole file carries after the swap (written now, or kept): recorded in its state. */
  fileTokens: Map<string, string>;
}

/** What decides whether a mart's whole file is written again. */
export interface WholeFile {
  /** The mart's rows are the ones the previous build exported (its version is unchanged: model-versions.ts). */
  unchanged: boolean;
  /** The token the warehouse this build started from recorded for the file. */
  previousToken: string | undefined;
  /** This build's token: written in the footer of a file written now (with the mart's name). */
  token: string;
}

/** The key of `<mart>/<token>` in a whole file's Parquet footer (key-value metadata). */
const STAMP_KEY = 'perks_build';

/**
 * Each mart to `<dir>/<mart>.parquet` (zstd level 1: a tenth less CPU than the default 3, files a few % larger);
 * a mart built by months (`monthFolder` says how) also or instead to `<dir>/<mart>/`, by `layout`; the other
 * form, left from an earlier layout, is removed at the swap so that nothing stale stays readable.
 */
export async function exportMarts(
  conn: DuckDBConnection,
  marts: Node[],
  dir: string,
  changes: FileChange[],
  plan: {
    layout: MartLayout;
    monthFolder: (mart: Node) => MonthFolder | undefined;
    wholeFile: (mart: Node) => WholeFile;
  },
  onStep?: (step: StepResult) => void,
): Promise<ExportedMarts> {
  mkdirSync(dir, { recursive: true });
  const done: ExportedMarts = { steps: [], outputs: [], fileTokens: new Map() };
  const push = (step: StepResult) => {
    done.steps.push(step);
    onStep?.(step);
  };
  for (const mart of marts) {
    const folder = plan.monthFolder(mart);
    const file = join(dir, `${mart.name}.parquet`);
    const months = join(dir, mart.name);
    const asFile = !folder || plan.layout !== 'months';
    const asMonths = folder && plan.layout !== 'file';
    const exportAs = async (name: string, write: () => Promise<Written>) =>
      push(await exportStep(conn, mart.name, name, done.steps, write));
    if (asFile)
      await exportAs(`marts/${mart.name}.parquet`, async () => {
        const { kept, token } = await exportFile(conn, mart.name, file, changes, plan.wholeFile(mart));
        done.fileTokens.set(mart.name, token);
        return { kept };
      });
    if (asMonths)
      await exportAs(`marts/${mart.name}/`, async () => ({
        monthFiles: await stageMonthFolder(conn, mart.name, months, folder, changes),
      }));
    if (!asFile && existsSync(file)) changes.push({ remove: file });
    if (folder && !asMonths && existsSync(months)) changes.push({ remove: months });
    done.outputs.push(asFile ? file : join(months, '*.parquet'));
  }
  return done;
}

/** What one export wrote: a month folder's files, or whether the whole file was kept as it was. */
interface Written {
  monthFiles?: MonthFiles;
  kept?: boolean;
}

/**
 * One export of a mart (`name`: its whole file or its month folder) as a step: skipped once an earlier step
 * failed, an error step (one line) if it fails; the rows counted are the mart's.
 */
async function exportStep(
  conn: DuckDBConnection,
  mart: string,
  name: string,
  earlier: StepResult[],
  write: () => Promise<Written>,
): Promise<StepResult> {
  if (earlier.some((s) => s.status === 'error')) return { name, kind: 'export', status: 'skipped', rows: null, ms: 0 };
  const started = Date.now();
  try {
    const written = await write();
    const rows = await countRows(conn, mart);
    return {
      name,
      kind: 'export',
      status: 'success',
      rows,
      ms: Date.now() - started,
      ...(written.monthFiles && { monthFiles: written.monthFiles }),
      ...(written.kept && { kept: true }),
    };
  } catch (err) {
    const error = `export of ${name} failed: ${firstLine(err)}`;
    return { name, kind: 'export', status: 'error', rows: null, ms: Date.now() - started, error };
  }
}

/** The mart's whole file: kept when `whole` allows and the file is the previous build's, else written. */
async function exportFile(
  conn: DuckDBConnection,
  mart: string,
  target: string,
  changes: FileChange[],
  whole: WholeFile,
): Promise<{ kept: boolean; token: string }> {
  removeStaleTemps(target);
  const { unchanged, previousToken } = whole;
  // the footer names the mart too: a build's token is the same in all its files
  const stamp = (token: string) => `${mart}/${token}`;
  if (unchanged && previousToken !== undefined && (await fileStamp(conn, target)) === stamp(previousToken))
    return { kept: true, token: previousToken };
  const temp = tempPathFor(target);
  changes.push({ temp, target });
  await conn.run(
    `COPY (SELECT * FROM ${id(mart)}) TO ${str(temp)}
     (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, KV_METADATA {${STAMP_KEY}: ${str(stamp(whole.token))}})`,
  );
  return { kept: false, token: whole.token };
}

/** The stamp in a file's footer; undefined when there is no file, no stamp, or no Parquet to read. */
async function fileStamp(conn: DuckDBConnection, file: string): Promise<string | undefined> {
  if (!existsSync(file)) return undefined;
  try {
    const r = await conn.runAndReadAll(
      `SELECT decode(value) AS v FROM parquet_kv_metadata(${str(file)}) WHERE key = encode(${str(STAMP_KEY)})`,
    );
    return (r.getRowObjectsJson() as { v: string }[])[0]?.v;
  } catch {
    return undefined; // not a Parquet file we can read: written again
  }
}
