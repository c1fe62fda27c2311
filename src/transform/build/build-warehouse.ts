/**
 * `perks build`: every model into a NEW warehouse file, data tests, marts exported to Parquet, then the
 * new files renamed over the old ones. A failed build leaves the previous warehouse and marts in place
 * and no temporary file behind.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { quotedIdentifier as quoted, type DuckDBConnection } from '../../shared/duckdb.js';
import { checkBuildOptions, setModelVariables, type BuildOptions, type CheckedBuildOptions } from './build-options.js';
import { openBuildDatabase, tuneForBuild, type BuildDatabase } from './build-database.js';
import { collectTests } from '../runner/data-tests.js';
import { modelDocs, writeDictionary } from '../export/dictionary.js';
import { firstLine } from '../errors.js';
import { exportMarts } from '../export/export-marts.js';
import type { MonthFolder } from '../export/export-months.js';
import { createLakeViews, lakeViewNames } from '../sources/lake-views.js';
import { narrowToLatestSnapshots, widenLatestSnapshots } from '../incremental/latest-snapshots.js';
import { CLOSE_TABLES, createCloseTables } from '../sources/close-tables.js';
import { DEFAULT_SQL_DIR, readProject, type Project } from '../models/model-files.js';
import { resolveGraph, type Node } from '../models/model-graph.js';
import { materialization, runModels, type StepResult } from '../runner/run-models.js';
import { ModelVersions } from '../incremental/model-versions.js';
import { IncrementalModels, lookupRowsTable, lookupTable } from '../incremental/incremental.js';
import { readStates, writeStates, type ModelState } from '../incremental/build-state.js';
import { compareWarehouses, describeDifference } from './compare-warehouses.js';
import { describeSeedFiles, dropSeed, keepsSeed, SEED_DIR, stageSeed, type SeedMonths } from './seed.js';
import { lakeRoot, pidAlive, withJournal } from '../../lake/index.js';
import { crashPoint } from '../../shared/crash-points.js';
import {
  applyChange,
  commit,
  discard,
  discardChange,
  removeStaleTemps,
  tempPathFor,
  type FileChange,
} from '../export/atomic-files.js';
import { newestExtractAt, readBuildRecord, recordBuild, type BuildOutcome } from './build-record.js';
import { closeKey, closesInForce, readCloses, type CloseRecord } from '../../closes/index.js';
import { now } from '../../shared/clock.js';
import { outputAt } from '../../output/index.js';

export interface BuildResult {
  ok: boolean;
  asOf: string;
  /** <out>/warehouse.duckdb (replaced only when ok). */
  warehouse: string;
  /**
   * One path per mart this build exported (empty unless ok): `<out>/marts/<mart>.parquet`, or the glob of a
   * mart exported by months only (`<out>/marts/<mart>/*.parquet`).
   */
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

export const warehousePath = (outDir: string): string => outputAt(outDir).warehouse;

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
    const evaluatedAt = now().toISOString();
    const result = await buildOnce(options, hooks, evaluatedAt, placeIn(outDir));
    if (result.ok && options.verifyIncremental) await verifyIncremental(options, result, evaluatedAt);
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

/** Where a build puts its warehouse and marts: the output's own, or a scratch folder's (no dictionary). */
interface Place {
  warehouse: string;
  marts: string;
  dictionary: boolean;
}
const placeIn = (dir: string, dictionary = true): Place => ({
  warehouse: warehousePath(dir),
  marts: outputAt(dir).marts,
  dictionary,
});

/**
 * `--verify-incremental`: a full build of the same lake into `<out>/.verify-incremental-…` (removed after),
 * compared table for table with the build just swapped in. On a difference the build fails with one line
 * naming the table and a row, and the full build's warehouse and marts are swapped in instead (they are right).
 */
async function verifyIncremental(options: CheckedBuildOptions, result: BuildResult, evaluatedAt: string) {
  const outDir = resolve(options.outDir);
  removeStaleScratches(outDir);
  const scratch = join(outDir, `.verify-incremental-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const full = await buildOnce({ ...options, full: true }, {}, evaluatedAt, placeIn(scratch, false));
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
    dropSeed(outDir); // it describes the incremental build, not the full one swapped in
    for (const name of readdirSync(placeIn(scratch).marts)) {
      const [target, built] = [join(placeIn(outDir).marts, name), join(placeIn(scratch).marts, name)];
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

/**
 * One build: the models into a new database file (the lake as views, the close record as tables), their data
 * tests, the marts exported; only when every step succeeded, the new files swapped over the old ones and the
 * dictionary written. A failure leaves the previous warehouse and marts, and no temporary file.
 */
async function buildOnce(
  options: CheckedBuildOptions,
  hooks: { onStep?: (step: StepResult) => void },
  evaluatedAt: string,
  place: Place,
): Promise<BuildResult> {
  const outDir = resolve(options.outDir);
  const project = readProject(options.sqlDir ? resolve(options.sqlDir) : DEFAULT_SQL_DIR);
  const target = place.warehouse;
  mkdirSync(dirname(target), { recursive: true });
  removeStaleTemps(target);
  const temp = tempPathFor(target);
  const changes: FileChange[] = [];
  let committed = false;
  const { db, previous, kept, unreadable } = await openFor(project, options, target, temp);
  try {
    await setModelVariables(db.conn, options, evaluatedAt);
    const declared = new Map(project.models.flatMap((m) => (m.header.intervals ? [[m.name, m.header.intervals]] : [])));
    const token = randomBytes(8).toString('hex');
    const versions = new ModelVersions(db.conn, outDir, previous, kept, token);
    const intervals = new IncrementalModels(db.conn, outDir, previous, kept, declared, (m) => versions.isUnchanged(m));
    const { steps, graph } = await modelsStep(db.conn, outDir, project, { intervals, versions }, hooks.onStep);
    if (unreadable) steps.unshift(unreadableStep(target, unreadable, hooks.onStep));
    const plan = exportPlan(options, { intervals, versions, previous }, token);
    const exported = succeeded(steps)
      ? await exportMarts(db.conn, graph.marts, place.marts, changes, plan, hooks.onStep)
      : { steps: [], outputs: [], fileTokens: new Map<string, string>() };
    steps.push(...exported.steps);
    let ok = succeeded(steps);
    const docs = ok ? await modelDocs(db.conn, graph.models, graph.tests) : [];
    // a store's working copy keeps the warehouse in pieces too (seed.ts), stamped in the states first
    const seeding = ok && place.dictionary && keepsSeed(outDir);
    const seedMonths = seeding ? seedPlan(graph.models, intervals, previous, token) : new Map<string, SeedMonths>();
    if (ok) await writeStates(db.conn, withFileTokens(versions.stamped(intervals.states), exported.fileTokens));
    if (seeding) {
      const seeded = await seedStep(db.conn, outDir, token, seedMonths, changes, hooks.onStep);
      steps.push(seeded);
      ok = seeded.status !== 'error';
    }
    const swapStarted = Date.now();
    if (ok) await db.conn.run('CHECKPOINT');
    db.close();
    if (ok) {
      crashPoint('before-swap');
      commit(temp, target);
      committed = true;
      for (const change of changes) applyChange(change);
      if (place.dictionary) writeDictionary(join(outputAt(outDir).docs, 'models.md'), docs);
      const ms = Date.now() - swapStarted;
      steps.push(step({ name: 'warehouse swap', kind: 'swap', status: 'success', rows: null, ms }, hooks.onStep));
    }
    return resultOf(ok, options.asOf, target, ok ? exported.outputs : [], steps);
  } finally {
    db.close();
    if (!committed) discard(temp);
    discard(`${temp}.spill`);
    for (const change of changes) discardChange(change);
  }
}

/**
 * The build's database at `temp`. A build starts from the previous warehouse's tables (a copy: the previous
 * stays as it is): incremental models keep their clean intervals, the others their table when nothing they
 * read changed (model-versions.ts); `--full`: from nothing.
 */
function openFor(project: Project, options: CheckedBuildOptions, target: string, temp: string) {
  const incremental = project.models.filter((m) => m.header.incremental).map((m) => m.name);
  const seed = !options.full && existsSync(target) ? target : undefined;
  const tables = project.models.filter((m) => materialization(m) === 'table').map((m) => m.name);
  const bookkeeping = incremental.flatMap((m) => [lookupTable(m), lookupRowsTable(m)]);
  return openSeeded(temp, options, seed, [...tables, ...bookkeeping]);
}

/**
 * The lake views, then every model and its data tests. The models read the lake while no switch replaces
 * files in it (another worker of the round may be landing its groups): never a window twice, nor a file gone
 * under a query (src/lake/journal.ts).
 */
async function modelsStep(
  conn: DuckDBConnection,
  outDir: string,
  project: Project,
  builds: { intervals: IncrementalModels; versions: ModelVersions },
  onStep?: (step: StepResult) => void,
) {
  return withJournal(outDir, async () => {
    const { lakeStep, graph, latest } = await lakeViewsStep(conn, outDir, project, onStep);
    const steps = [
      lakeStep,
      ...(await runModels(conn, graph.models, graph.tests, {
        runTests: true,
        lakeViews: graph.sources,
        onStep,
        incremental: builds.intervals,
        versions: builds.versions,
      })),
    ];
    // stored whole: analysts' lake views hold every snapshot
    await widenLatestSnapshots(conn, outDir, latest);
    return { steps, graph };
  });
}

/** The warning of a build that could not read the previous warehouse, and so built every model whole. */
function unreadableStep(target: string, unreadable: string, onStep?: (step: StepResult) => void): StepResult {
  const error = `the previous warehouse ${target} could not be read (${unreadable}): every model was built whole from the lake, and replaces it`;
  return step({ name: 'previous warehouse', kind: 'swap', status: 'warn', rows: null, ms: 0, error }, onStep);
}

/**
 * How each mart is exported: by months (only those the build replaced, when the folder is the previous
 * build's) or as a whole file (kept when the mart is unchanged and the file is the previous build's).
 */
function exportPlan(
  options: CheckedBuildOptions,
  built: { intervals: IncrementalModels; versions: ModelVersions; previous: Map<string, ModelState> | null },
  token: string,
) {
  const { intervals, versions, previous } = built;
  return {
    layout: options.martLayout,
    monthFolder: (mart: Node): MonthFolder | undefined => {
      const state = intervals.states.get(mart.name);
      if (!mart.header.incremental || !state) return undefined;
      state.exported = options.martLayout === 'file' ? undefined : token;
      return {
        time: mart.header.incremental.time,
        replaced: intervals.replacedMonths(mart.name),
        previousToken: intervals.previousExport(mart.name),
        token,
        months: intervals.monthsHeld(mart.name),
      };
    },
    wholeFile: (mart: Node) => ({
      unchanged: versions.isUnchanged(mart.name),
      previousToken: previous?.get(mart.name)?.exportedFile,
      token,
    }),
  };
}

/**
 * Drops every table and view of a seeded database but the `keep` tables (none: nothing is kept); returns the
 * tables kept. The rest of the build then starts as from an empty file.
 */
async function keepOnly(conn: DuckDBConnection, keep: string[]): Promise<Set<string>> {
  const reader = await conn.runAndReadAll(
    `SELECT table_name AS name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()
     UNION ALL SELECT view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal AND database_name = current_database()
     ORDER BY kind DESC`,
  );
  const kept = new Set<string>();
  for (const { name, kind } of reader.getRowObjectsJson() as { name: string; kind: string }[]) {
    if (kind === 'TABLE' && keep.includes(name)) kept.add(name);
    else await conn.run(`DROP ${kind} IF EXISTS ${quoted(name)}`);
  }
  return kept;
}

/**
 * The lake as views of the build (one per stream), as its first step: how many files they read; then the
 * models' graph, and the views its models read only the latest snapshots of, narrowed (latest-snapshots.ts).
 */
async function lakeViewsStep(
  conn: DuckDBConnection,
  outDir: string,
  project: Project,
  onStep?: (step: StepResult) => void,
) {
  const started = Date.now();
  const lake = await createLakeViews(conn, lakeRoot(outDir));
  const graph = await modelGraph(conn, outDir, project);
  const latest = await narrowToLatestSnapshots(conn, outDir, [...graph.models, ...graph.singular]);
  const files = lake.reduce((n, v) => n + v.files, 0);
  const lakeStep = step(
    {
      name: 'lake views',
      kind: 'lake',
      status: 'success',
      rows: files,
      ms: Date.now() - started,
      ...(latest.length ? { latestSnapshots: latest } : {}),
    },
    onStep,
  );
  return { lakeStep, graph, latest };
}

/**
 * The models in dependency order and their data tests, from the SQL and the sources they may read: the lake's
 * views and the close record's tables (created here, from the record as it is now).
 */
async function modelGraph(conn: DuckDBConnection, outDir: string, project: Project) {
  await createCloseTables(conn, outDir);
  const sources = [...lakeViewNames(), ...CLOSE_TABLES];
  const graph = await resolveGraph(conn, project, sources);
  const marts = graph.models.filter((m) => m.layer === 'marts');
  return {
    models: graph.models,
    tests: collectTests(graph.models, graph.tests),
    singular: graph.tests,
    sources,
    marts,
  };
}

const succeeded = (steps: readonly StepResult[]) => steps.every((s) => s.status !== 'error');

/** `states` with each mart's whole-file token (export-marts.ts); a mart without one keeps none. */
function withFileTokens(states: Map<string, ModelState>, tokens: Map<string, string>): Map<string, ModelState> {
  for (const [name, state] of states) state.exportedFile = tokens.get(name);
  return states;
}

/**
 * The models the seed keeps by month (those built by intervals), with the months this build replaced; each
 * one's state stamped with the seed's token.
 */
function seedPlan(
  models: Node[],
  intervals: IncrementalModels,
  previous: Map<string, ModelState> | null,
  token: string,
): Map<string, SeedMonths> {
  const plan = new Map<string, SeedMonths>();
  for (const model of models) {
    const state = intervals.states.get(model.name);
    if (!model.header.incremental || !state) continue;
    plan.set(model.name, {
      time: model.header.incremental.time,
      replaced: intervals.replacedMonths(model.name),
      previousToken: previous?.get(model.name)?.seed,
    });
    state.seed = token;
  }
  return plan;
}

/** The seed staged (seed.ts) as a step of the build: its files written, kept and removed. */
async function seedStep(
  conn: DuckDBConnection,
  outDir: string,
  token: string,
  months: Map<string, SeedMonths>,
  changes: FileChange[],
  onStep?: (step: StepResult) => void,
): Promise<StepResult> {
  const started = Date.now();
  try {
    const files = await stageSeed(conn, outDir, token, months, changes);
    return step(
      {
        name: describeSeedFiles(files),
        kind: 'export',
        status: 'success',
        rows: files.written,
        ms: Date.now() - started,
      },
      onStep,
    );
  } catch (err) {
    const error = `the seed (${SEED_DIR}/) could not be written: ${firstLine(err)}`;
    return step(
      { name: SEED_DIR, kind: 'export', status: 'error', rows: null, ms: Date.now() - started, error },
      onStep,
    );
  }
}

/**
 * The build's database, seeded from the previous warehouse (a copy) with its states and the tables it may keep
 * (`--full`: none). A previous warehouse that cannot be read (damaged, cut short, not DuckDB) is no reason to
 * fail: the build starts from an empty database, as the first build does, and says why (`unreadable`).
 */
async function openSeeded(
  temp: string,
  options: CheckedBuildOptions,
  seed: string | undefined,
  keep: string[],
): Promise<{ db: BuildDatabase; previous: Map<string, ModelState> | null; kept: Set<string>; unreadable?: string }> {
  let unreadable: string | undefined;
  if (seed) {
    let db: BuildDatabase | undefined;
    try {
      db = await openBuildDatabase(temp, options.memoryLimit, seed);
      await tuneForBuild(db.conn);
      const previous = await readStates(db.conn);
      return { db, previous, kept: await keepOnly(db.conn, keep) };
    } catch (err) {
      db?.close();
      discard(temp);
      unreadable = firstLine(err);
    }
  }
  const db = await openBuildDatabase(temp, options.memoryLimit);
  try {
    await tuneForBuild(db.conn);
    const previous = options.full ? null : await readStates(db.conn);
    return { db, previous, kept: await keepOnly(db.conn, []), unreadable };
  } catch (err) {
    db.close();
    throw err;
  }
}

function step(result: StepResult, onStep?: (step: StepResult) => void): StepResult {
  onStep?.(result);
  return result;
}

function resultOf(ok: boolean, asOf: string, warehouse: string, marts: string[], steps: StepResult[]): BuildResult {
  const error = steps.find((s) => s.status === 'error')?.error;
  const warnings = steps.filter((s) => s.status === 'warn').map((s) => s.error ?? s.name);
  return { ok, asOf, warehouse, marts, steps, warnings, ...(error ? { error } : {}) };
}
