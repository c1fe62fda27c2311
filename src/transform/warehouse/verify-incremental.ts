/**
 * `perks build --verify-incremental`: the same lake built whole in a scratch folder and compared with the
 * incremental build just swapped in; on a difference the full build replaces it.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { CheckedBuildOptions } from './build-options.js';
import { buildOnce, placeIn, type BuildResult } from './build-once.js';
import { compareWarehouses, describeDifference } from './compare-warehouses.js';
import { dropSeed } from './seed.js';
import { commit } from '../export/atomic-files.js';
import { pidAlive } from '../../lake/index.js';
import { outputAt } from '../../output/index.js';

/**
 * `--verify-incremental`: a full build of the same lake into `<out>/.verify-incremental-…` (removed after),
 * compared table for table with the build just swapped in. On a difference the build fails with one line
 * naming the table and a row, and the full build's warehouse and marts are swapped in instead (they are right).
 */
export async function verifyIncremental(options: CheckedBuildOptions, result: BuildResult, evaluatedAt: string) {
  const { output } = options;
  removeStaleScratches(output.dir);
  const scratch = join(output.dir, `.verify-incremental-${process.pid}-${randomBytes(4).toString('hex')}`);
  // the scratch folder is laid out as an output; the full build reads the output's lake and writes only there
  const place = placeIn(outputAt(scratch), false);
  try {
    const full = await buildOnce({ ...options, full: true }, {}, evaluatedAt, place);
    if (!full.ok) {
      Object.assign(result, { ok: false, error: `the full build of --verify-incremental failed: ${full.error}` });
      return;
    }
    // the most upstream difference first: the one the others follow from
    const order = full.steps.map((s) => s.name);
    const differences = (
      await compareWarehouses(result.warehouse, full.warehouse, {
        memoryLimit: options.memoryLimit,
        spillDirectory: join(scratch, 'compare.spill'),
      })
    ).sort((a, b) => order.indexOf(a.table) - order.indexOf(b.table));
    result.steps.push({
      name: 'verify incremental',
      kind: 'swap',
      status: differences.length ? 'error' : 'success',
      rows: differences.length,
      ms: 0,
    });
    if (!differences.length) return;
    commit(full.warehouse, result.warehouse);
    dropSeed(output); // it describes the incremental build, not the full one swapped in
    for (const name of readdirSync(place.marts)) {
      const [target, built] = [join(output.marts, name), join(place.marts, name)];
      // a month folder is replaced whole (a rename cannot replace a folder that holds files)
      if (statSync(built).isDirectory()) rmSync(target, { recursive: true, force: true });
      commit(built, target);
    }
    result.ok = false;
    result.error =
      `the incremental build differs from a full build in ${differences.length} tables: ${describeDifference(differences[0])}` +
      '; the full build was swapped in';
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Scratch folders of a --verify-incremental whose process is gone (killed mid-way). */
function removeStaleScratches(outDir: string): void {
  for (const name of readdirSync(outDir)) {
    const pid = Number(/^\.verify-incremental-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    rmSync(join(outDir, name), { recursive: true, force: true });
  }
}
