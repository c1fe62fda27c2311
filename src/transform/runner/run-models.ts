/**
 * Runs the models in dependency order on one connection, each test as soon as what it reads is built.
 * The first failure stops the build: every step after it is reported as skipped, not dropped.
 */
import { quotedIdentifier as id, type DuckDBConnection } from '../../shared/duckdb.js';
import { describeFailure, runTest, type DataTest } from './data-tests.js';
import { crashPoint } from '../../shared/crash-points.js';
import { firstLine } from '../errors.js';
import type { Materialization } from '../models/header.js';
import { stripTrailingSemicolon, type Node } from '../models/model-graph.js';
import type { IncrementalModels, IntervalCounts } from '../incremental/incremental.js';
import type { ModelVersions } from '../incremental/model-versions.js';
import type { LatestSnapshots } from '../incremental/latest-snapshots.js';

/** A mart's month folder as a build left it (export/export-months.ts): the month files written, kept and removed. */
export interface MonthFiles {
  written: number;
  kept: number;
  removed: number;
}

/** warn: a data test of warn severity found rows (reported; the build goes on). */
export type StepStatus = 'success' | 'warn' | 'error' | 'skipped';

export interface StepResult {
  name: string;
  kind: 'lake' | 'model' | 'test' | 'export' | 'swap';
  status: StepStatus;
  /** Rows built (tables), offending rows (tests), rows exported; null where counting would cost a scan. */
  rows: number | null;
  ms: number;
  /** One line, on error. */
  error?: string;
  /** A failed data test: a few of its offending rows (JSON-safe). */
  examples?: Record<string, unknown>[];
  /** An incremental model: the intervals it rebuilt and skipped, and why it was built whole if it was. */
  intervals?: IntervalCounts;
  /** A mart's month folder (export-months.ts): the month files written, kept and removed. */
  monthFiles?: MonthFiles;
  /** A data test run on the group-months its model's build replaced (DataTest.sqlOn): how many. */
  testedIntervals?: number;
  /**
   * A model kept from the previous warehouse, or a data test not run again (it passed at the previous build):
   * nothing it reads changed (model-versions.ts).
   */
  kept?: boolean;
  /**
   * An ephemeral model whose inputs did not change: not computed (a temporary view, no rows counted); a model
   * rebuilt in this build that reads it computes it as part of its own query.
   */
  deferred?: boolean;
  /** The lake views step: the views read through each group's latest snapshot only (latest-snapshots.ts). */
  latestSnapshots?: LatestSnapshots[];
}

/** Tables unless the header says otherwise (what is read more than once is computed once). */
export const materialization = (m: Pick<Node, 'header'>): Materialization => m.header.materialized ?? 'table';

const CREATE: Record<Materialization, string> = { table: 'TABLE', view: 'VIEW', ephemeral: 'TEMP TABLE' };

/** What runModels is told besides the models and tests. */
export interface RunOptions {
  runTests: boolean;
  lakeViews: string[];
  onStep?: (step: StepResult) => void;
  /** Builds the models whose header says `incremental:` (absent: every model whole, as a view or table). */
  incremental?: IncrementalModels;
  /** Keeps the tables whose inputs did not change (absent: every model is built). */
  versions?: ModelVersions;
}

export async function runModels(
  conn: DuckDBConnection,
  models: Node[],
  tests: DataTest[],
  options: RunOptions,
): Promise<StepResult[]> {
  const steps: StepResult[] = [];
  const record = (step: StepResult) => {
    steps.push(step);
    options.onStep?.(step);
  };
  const skip = (name: string, kind: 'model' | 'test') => record({ name, kind, status: 'skipped', rows: null, ms: 0 });
  // a model built by users reads the users whose upstream rows changed: kept as those models replace intervals
  for (const model of models)
    if (model.header.byUser)
      for (const dep of model.dependsOn) options.incremental?.watchUsers(dep, model.header.byUser);
  const built = new Set<string>(options.lakeViews);
  const pending = options.runTests ? [...tests] : [];
  let failed = false;

  // each test runs as soon as every model it reads is built; once a step failed, it is skipped instead
  const runReadyTests = async () => {
    for (const test of [...pending]) {
      if (!test.needs.every((n) => built.has(n))) continue;
      pending.splice(pending.indexOf(test), 1);
      if (failed) {
        skip(test.name, 'test');
        continue;
      }
      const step = await testStep(conn, test, options);
      record(step);
      failed ||= step.status === 'error';
    }
  };

  for (const model of models) {
    if (failed) {
      skip(model.name, 'model');
      continue;
    }
    const step = await modelStep(conn, model, models, options);
    record(step);
    if (step.status === 'error') failed = true;
    else {
      built.add(model.name);
      crashPoint('mid-build');
    }
    await runReadyTests();
  }
  for (const test of pending) skip(test.name, 'test');
  return steps;
}

/** Builds one model: its step, an error step (one line) if it failed. */
async function modelStep(
  conn: DuckDBConnection,
  model: Node,
  models: Node[],
  options: RunOptions,
): Promise<StepResult> {
  const started = Date.now();
  try {
    const byIntervals = materialization(model) === 'table' && options.incremental;
    const { rows, ...more } =
      byIntervals && (model.header.incremental || model.header.byUser)
        ? await buildByIntervals(model, options.incremental!, options.versions)
        : await buildViewOrTable(conn, model, models, options.versions);
    return { name: model.name, kind: 'model', status: 'success', rows, ms: Date.now() - started, ...more };
  } catch (err) {
    const error = `model ${model.name} (${model.file}) failed: ${firstLine(err)}`;
    return { name: model.name, kind: 'model', status: 'error', rows: null, ms: Date.now() - started, error };
  }
}

/** What a model's build adds to its step. */
type Built = Pick<StepResult, 'rows' | 'intervals' | 'kept' | 'deferred'>;

/** A model whose header says `incremental:`, by its dirty intervals (incremental.ts) or users (by-user.ts). */
async function buildByIntervals(
  model: Node,
  incremental: IncrementalModels,
  versions: ModelVersions | undefined,
): Promise<Built> {
  const { rows, intervals } = model.header.byUser
    ? await incremental.buildByUser(model)
    : await incremental.build(model);
  versions?.settle(model.name, intervals.whole === undefined && intervals.rebuilt === 0);
  return { rows, intervals };
}

/**
 * A model as a whole view or table: a table kept from the previous warehouse when nothing it reads changed;
 * an unchanged ephemeral model deferred to a temporary view where it may be (see deferrable).
 */
async function buildViewOrTable(
  conn: DuckDBConnection,
  model: Node,
  models: Node[],
  versions: ModelVersions | undefined,
): Promise<Built> {
  const kind = materialization(model);
  const unchanged = (await versions?.unchanged(model)) ?? false;
  const kept = unchanged && kind === 'table' && versions!.hasPreviousTable(model.name);
  const deferred = unchanged && kind === 'ephemeral' && deferrable(model, models);
  if (!kept)
    await conn.run(
      `CREATE OR REPLACE ${deferred ? 'TEMP VIEW' : CREATE[kind]} ${id(model.name)} AS\n${stripTrailingSemicolon(model.sql)}\n`,
    );
  versions?.settle(model.name, unchanged);
  const rows = kind === 'view' || deferred ? null : await countRows(conn, model.name);
  return { rows, ...(kept ? { kept } : {}), ...(deferred ? { kept: true, deferred } : {}) };
}

/**
 * Runs one data test (on the group-months its model's build replaced, where it can): its step, an error step
 * when it found rows at error severity or could not run.
 */
async function testStep(conn: DuckDBConnection, test: DataTest, options: RunOptions): Promise<StepResult> {
  const started = Date.now();
  const replaced = test.sqlOn ? options.incremental?.replacedRows(test.model) : null;
  try {
    // a test that stops the build passed at the previous build (its state is written only then): kept
    // when its SQL and everything it reads are unchanged; a warning is reported again at every build
    const versions = test.severity === 'error' ? options.versions : undefined;
    const key = testStateKey(test.name);
    if (versions && (await versions.unchanged({ name: key, sql: test.sql, dependsOn: test.needs }))) {
      versions.settle(key, true);
      return { name: test.name, kind: 'test', status: 'success', rows: 0, ms: Date.now() - started, kept: true };
    }
    const outcome = await runTest(conn, replaced ? test.sqlOn!(replaced.where) : test.sql);
    const ok = outcome.failures === 0;
    if (ok) versions?.settle(key, false);
    return {
      name: test.name,
      kind: 'test',
      status: ok ? 'success' : test.severity === 'warn' ? 'warn' : 'error',
      rows: outcome.failures,
      ms: Date.now() - started,
      ...(replaced ? { testedIntervals: replaced.intervals } : {}),
      ...(ok ? {} : { error: describeFailure(test, outcome), examples: outcome.examples }),
    };
  } catch (err) {
    const error = `data test ${test.name} could not run: ${firstLine(err)}`;
    return { name: test.name, kind: 'test', status: 'error', rows: null, ms: Date.now() - started, error };
  }
}

/**
 * Whether an ephemeral model may stand as a view, computed only inside the queries that read it: it reads only
 * lake views and stored tables, none of which a model reading it also reads. A model built by intervals narrows
 * its own lake views and upstream models to its dirty months while it runs (incremental.ts); a view reading
 * one of those would then see only those months.
 */
function deferrable(model: Node, models: Node[]): boolean {
  const byName = new Map(models.map((m) => [m.name, m]));
  const readsStored = model.dependsOn.every((d) => {
    const dep = byName.get(d);
    return dep === undefined || materialization(dep) === 'table';
  });
  const readers = models.filter((m) => m.dependsOn.includes(model.name));
  return readsStored && readers.every((r) => r.dependsOn.every((d) => !model.dependsOn.includes(d)));
}

/** A data test's entry in the build state (beside the models'). */
const testStateKey = (name: string): string => `test: ${name}`;

export async function countRows(conn: DuckDBConnection, table: string): Promise<number> {
  const reader = await conn.runAndReadAll(`SELECT count(*) AS n FROM ${id(table)}`);
  return Number(reader.getRowObjectsJson()[0].n);
}
