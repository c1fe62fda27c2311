/**
 * `perks build`: every model into a NEW warehouse file, data tests, marts exported to Parquet, then the
 * new files renamed over the old ones. A failed build leaves the previous warehouse and marts in place
 * and no temporary file behind.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DuckDBInstance, quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import { checkBuildOptions, setModelVariables, type BuildOptions, type CheckedBuildOptions } from './build-options.js';
import { collectTests } from './data-tests.js';
import { modelDocs, writeDictionary } from './dictionary.js';
import { firstLine } from './errors.js';
import { createLakeViews, lakeViewNames } from './lake-views.js';
import { CLOSE_TABLES, createCloseTables } from './close-tables.js';
import { DEFAULT_SQL_DIR, readProject } from './model-files.js';
import { resolveGraph, type Node } from './model-graph.js';
import { countRows, runModels, type StepResult } from './run-models.js';
import { crashPoint } from '../shared/crash-points.js';
import { commit, discard, removeStaleTemps, tempPathFor } from './atomic-files.js';
import { newestExtractAt, readBuildRecord, recordBuild, type BuildOutcome } from './build-record.js';
import { closeKey, closesInForce, readCloses, type CloseRecord } from '../closes/index.js';
import { now } from '../shared/clock.js';

export interface BuildResult {
  ok: boolean;
  asOf: string;
  /** <out>/warehouse.duckdb (replaced only when ok). */
  warehouse: string;
  /** <out>/marts/<mart>.parquet written by this build (empty unless ok). */
  marts: string[];
  steps: StepResult[];
  /** The first error, one line. */
  error?: string;
  /**
   * A failed build: the signed-off months the failing rows concern and since when the marts are as they were,
   * one line that follows the error ("; it concerns …").
   */
  impact?: string;
  /** One line per data test of warn severity that found rows (the build went on). */
  warnings: string[];
}

export const warehousePath = (outDir: string): string => join(resolve(outDir), 'warehouse.duckdb');

/**
 * `onStep` hears of each step as it ends (progress for the CLI). Every build, failed or not, is recorded in
 * `<out>/state/build.json` (build-record.ts); a failure says which signed-off months its rows concern and since
 * when the marts are left as they were.
 */
export async function buildWarehouse(
  input: BuildOptions,
  hooks: { onStep?: (step: StepResult) => void } = {},
): Promise<BuildResult> {
  const options = checkBuildOptions(input); // a bad option is no build: refused before anything is recorded
  const outDir = resolve(options.outDir);
  const lakeAt = await newestExtractAt(outDir).catch(() => null);
  const record = (outcome: Omit<BuildOutcome, 'at' | 'lakeAt'>) =>
    recordBuild(outDir, { ...outcome, at: now().toISOString(), lakeAt }).catch(() => undefined);
  try {
    const result = await buildOnce(options, hooks);
    if (!result.ok) result.impact = await impactOf(outDir, result);
    await record({
      asOf: result.asOf,
      ok: result.ok,
      warnings: result.warnings.length,
      ...(result.error ? { error: `${result.error}${result.impact ?? ''}` } : {}),
    });
    return result;
  } catch (err) {
    await record({ asOf: options.asOf, ok: false, warnings: 0, error: firstLine(err) });
    throw err;
  }
}

/**
 * What follows a failure's line: the signed-off months its offending rows concern (a rule that breaks only
 * after a close must be seen for what it is) and since when the marts are as they were.
 */
async function impactOf(outDir: string, result: BuildResult): Promise<string> {
  const failed = result.steps.find((s) => s.status === 'error');
  const inForce = await readCloses(outDir)
    .then((records) => closesInForce(records))
    .catch(() => new Map<string, CloseRecord>());
  const closed = new Map<string, CloseRecord>();
  for (const row of failed?.examples ?? []) {
    const group = Number(row.organisation_group_id);
    const month = typeof row.month === 'string' ? row.month.slice(0, 7) : '';
    const close = inForce.get(closeKey(group, month));
    if (close) closed.set(`${group}/${month}`, close);
  }
  const months = [...closed.values()].map(
    (c) => `${c.month} of group ${c.organisation_group_id} (signed off ${c.at.slice(0, 10)})`,
  );
  const concerns = months.length ? `; it concerns the signed-off ${months.join(', ')}` : '';
  const since = (await readBuildRecord(outDir))?.lastSuccess?.at;
  const kept = since
    ? `; the marts, reports and BI files stay as built at ${since} until a build succeeds (\`perks status\` shows their age)`
    : '';
  return `${concerns}${kept}`;
}

async function buildOnce(
  options: CheckedBuildOptions,
  hooks: { onStep?: (step: StepResult) => void },
): Promise<BuildResult> {
  const outDir = resolve(options.outDir);
  const project = readProject(options.sqlDir ? resolve(options.sqlDir) : DEFAULT_SQL_DIR);
  const target = warehousePath(outDir);
  mkdirSync(outDir, { recursive: true });
  removeStaleTemps(target);
  const temp = tempPathFor(target);
  const exports: { temp: string; target: string }[] = [];
  let committed = false;
  const opened = writablePath(temp);
  const instance = await DuckDBInstance.create(opened.path, {
    preserve_insertion_order: 'false',
    memory_limit: options.memoryLimit,
    temp_directory: `${opened.path}.spill`,
  }).catch((err: unknown) => {
    opened.release();
    throw err;
  });
  const conn = await instance.connect();
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    conn.closeSync();
    instance.closeSync();
    opened.release();
  };
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    // Settings, not instance options: DuckDB ignores the first as an option and refuses the second.
    // Text is stored plain: trying dictionary and FSST compression on every text column costs about 5 of the
    // build's 34 CPU-s at 10 M orders (half of it on stg_orders' status, brand and currency) and would make
    // the file 2.8 times smaller (330 MB instead of 920). Numbers, dates and timestamps are still compressed.
    await conn.run(`SET disabled_compression_methods = 'fsst,dict_fsst,dictionary'`);
    // Each Parquet footer of the lake is read once per build, not at every query that reads the stream
    // (1,500 order files: 0.07 CPU-s a read). A file replaced during the build has a new time and is read again.
    await conn.run('SET parquet_metadata_cache = true');
    await setModelVariables(conn, options);
    const started = Date.now();
    const lake = await createLakeViews(conn, join(outDir, 'lake'));
    const lakeStep: StepResult = {
      name: 'lake views',
      kind: 'lake',
      status: 'success',
      rows: lake.reduce((n, v) => n + v.files, 0),
      ms: Date.now() - started,
    };
    hooks.onStep?.(lakeStep);
    await createCloseTables(conn, outDir);
    const sources = [...lakeViewNames(), ...CLOSE_TABLES];
    const graph = await resolveGraph(conn, project, sources);
    const tests = collectTests(graph.models, graph.tests);
    const steps = [
      lakeStep,
      ...(await runModels(conn, graph.models, tests, { runTests: true, lakeViews: sources, onStep: hooks.onStep })),
    ];
    let ok = steps.every((s) => s.status !== 'error');
    const marts = graph.models.filter((m) => m.layer === 'marts');
    if (ok) {
      steps.push(...(await exportMarts(conn, marts, join(outDir, 'marts'), exports, hooks.onStep)));
      ok = steps.every((s) => s.status !== 'error');
    }
    const docs = ok ? await modelDocs(conn, graph.models, tests) : [];
    const swapStarted = Date.now();
    if (ok) await conn.run('CHECKPOINT');
    close();
    if (ok) {
      crashPoint('before-swap');
      commit(temp, target);
      committed = true;
      for (const e of exports) commit(e.temp, e.target);
      writeDictionary(join(outDir, 'docs', 'models.md'), docs);
      const swap: StepResult = {
        name: 'warehouse swap',
        kind: 'swap',
        status: 'success',
        rows: null,
        ms: Date.now() - swapStarted,
      };
      steps.push(swap);
      hooks.onStep?.(swap);
    }
    const error = steps.find((s) => s.status === 'error')?.error;
    const warnings = steps.filter((s) => s.status === 'warn').map((s) => s.error ?? s.name);
    return {
      ok,
      asOf: options.asOf,
      warehouse: target,
      marts: ok ? exports.map((e) => e.target) : [],
      steps,
      warnings,
      ...(error ? { error } : {}),
    };
  } finally {
    close();
    if (!committed) discard(temp);
    discard(`${temp}.spill`);
    for (const e of exports) discard(e.temp);
  }
}

/**
 * The path to open a writable database at. DuckDB names its write-ahead log by inserting `.wal` before the
 * first `?` of the (resolved) path, which it reads as the start of options, so in an output folder named
 * `a?b` it would write `a.wal?b/…` and fail. Such a build writes its database in the system's temporary
 * directory instead; `release` (after closing) copies it to `file`, from where it is swapped in as usual.
 */
function writablePath(file: string): { path: string; release: () => void } {
  if (!file.includes('?')) return { path: file, release: () => undefined };
  const elsewhere = join(tmpdir(), `.perks-build-${randomBytes(6).toString('hex')}.duckdb`);
  let released = false;
  return {
    path: elsewhere,
    release: () => {
      if (released) return;
      released = true;
      try {
        if (existsSync(elsewhere)) copyFileSync(elsewhere, file);
      } finally {
        for (const f of [elsewhere, `${elsewhere}.wal`, `${elsewhere}.spill`])
          rmSync(f, { recursive: true, force: true });
      }
    },
  };
}

/** Each mart to <out>/marts/<mart>.parquet (zstd level 1: a tenth less CPU than the default 3, files a few % larger), written under a temporary name first. */
async function exportMarts(
  conn: DuckDBConnection,
  marts: Node[],
  dir: string,
  exports: { temp: string; target: string }[],
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
