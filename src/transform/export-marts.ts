/** The marts to Parquet, for BI tools: written under temporary names, swapped in with the warehouse. */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import { removeStaleTemps, tempPathFor, type FileChange } from './atomic-files.js';
import type { MartLayout } from './build-options.js';
import { firstLine } from './errors.js';
import { stageMonthFolder, type MonthFolder } from './export-months.js';
import type { Node } from './model-graph.js';
import { countRows, type StepResult } from './run-models.js';

export interface ExportedMarts {
  steps: StepResult[];
  /** One path per mart a reader opens: its file, or its month files' glob (`marts/<mart>/*.parquet`). */
  outputs: string[];
}

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
  plan: { layout: MartLayout; monthFolder: (mart: Node) => MonthFolder | undefined },
  onStep?: (step: StepResult) => void,
): Promise<ExportedMarts> {
  mkdirSync(dir, { recursive: true });
  const done: ExportedMarts = { steps: [], outputs: [] };
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
    const forms = [...(asFile ? ['file'] : []), ...(asMonths ? ['months'] : [])];
    for (const form of forms) {
      const name = form === 'file' ? `marts/${mart.name}.parquet` : `marts/${mart.name}/`;
      if (done.steps.some((s) => s.status === 'error')) {
        push({ name, kind: 'export', status: 'skipped', rows: null, ms: 0 });
        continue;
      }
      const started = Date.now();
      try {
        const monthFiles =
          form === 'file'
            ? await exportFile(conn, mart.name, file, changes)
            : await stageMonthFolder(conn, mart.name, months, folder!, changes);
        const rows = await countRows(conn, mart.name);
        push({
          name,
          kind: 'export',
          status: 'success',
          rows,
          ms: Date.now() - started,
          ...(monthFiles && { monthFiles }),
        });
      } catch (err) {
        const error = `export of ${name} failed: ${firstLine(err)}`;
        push({ name, kind: 'export', status: 'error', rows: null, ms: Date.now() - started, error });
      }
    }
    if (!asFile && existsSync(file)) changes.push({ remove: file });
    if (folder && !asMonths && existsSync(months)) changes.push({ remove: months });
    done.outputs.push(asFile ? file : join(months, '*.parquet'));
  }
  return done;
}

async function exportFile(conn: DuckDBConnection, mart: string, target: string, changes: FileChange[]) {
  removeStaleTemps(target);
  const temp = tempPathFor(target);
  changes.push({ temp, target });
  await conn.run(
    `COPY (SELECT * FROM ${id(mart)}) TO ${str(temp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`,
  );
  return undefined;
}
