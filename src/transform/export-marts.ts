/** The marts to Parquet, for BI tools: written under a temporary name, swapped in with the warehouse. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import { removeStaleTemps, tempPathFor } from './atomic-files.js';
import { firstLine } from './errors.js';
import type { Node } from './model-graph.js';
import { countRows, type StepResult } from './run-models.js';

/** A file written under a temporary name, renamed over its target when the build swaps. */
export interface Staged {
  temp: string;
  target: string;
}

/** Each mart to <out>/marts/<mart>.parquet (zstd level 1: a tenth less CPU than the default 3, files a few % larger), written under a temporary name first. */
export async function exportMarts(
  conn: DuckDBConnection,
  marts: Node[],
  dir: string,
  exports: Staged[],
  onStep?: (step: StepResult) => void,
): Promise<StepResult[]> {
  mkdirSync(dir, { recursive: true });
  const steps: StepResult[] = [];
  const push = (step: StepResult) => {
    steps.push(step);
    onStep?.(step);
  };
  for (const mart of marts) {
    const target = join(dir, `${mart.name}.parquet`);
    const temp = tempPathFor(target);
    removeStaleTemps(target);
    const started = Date.now();
    const name = `marts/${mart.name}.parquet`;
    if (steps.some((s) => s.status === 'error')) {
      push({ name, kind: 'export', status: 'skipped', rows: null, ms: 0 });
      continue;
    }
    try {
      exports.push({ temp, target });
      await conn.run(
        `COPY (SELECT * FROM ${id(mart.name)}) TO ${str(temp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`,
      );
      push({
        name,
        kind: 'export',
        status: 'success',
        rows: await countRows(conn, mart.name),
        ms: Date.now() - started,
      });
    } catch (err) {
      push({
        name,
        kind: 'export',
        status: 'error',
        rows: null,
        ms: Date.now() - started,
        error: `export of ${name} failed: ${firstLine(err)}`,
      });
    }
  }
  return steps;
}
