/**
 * One build: the models into a NEW warehouse file, data tests, marts exported to Parquet, then the new files
 * renamed over the old ones. A failed build leaves the previous warehouse and marts in place and no temporary
 * file behind.
 */
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { setModelVariables, type CheckedBuildOptions } from './build-options.js';
import { openFor } from './build-database.js';
import { modelsStep, step } from './build-steps.js';
import { seedPlan, seedStep } from './seed-step.js';
import { keepsSeed, type SeedMonths } from './seed.js';
import { modelDocs, writeDictionary } from '../export/dictionary.js';
import { exportMarts } from '../export/export-marts.js';
import type { MonthFolder } from '../export/export-months.js';
import { DEFAULT_SQL_DIR, readProject } from '../models/model-files.js';
import type { Node } from '../models/model-graph.js';
import type { StepResult } from '../runner/run-models.js';
import { ModelVersions } from '../incremental/model-versions.js';
import { IncrementalModels } from '../incremental/incremental.js';
import { writeStates, type ModelState } from '../incremental/build-state.js';
import { crashPoint } from '../../shared/crash-points.js';
import type { Output } from '../../output/index.js';
import {
  applyChange,
  commit,
  discard,
  discardChange,
  removeStaleTemps,
  tempPathFor,
  type FileChange,
} from '../export/atomic-files.js';

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

/** Where a build puts its warehouse and marts: the output's own, or a scratch folder's (no dictionary). */
export interface Place {
  warehouse: string;
  marts: string;
  dictionary: boolean;
}
export const placeIn = (output: Output, dictionary = true): Place => ({
  warehouse: output.warehouse,
  marts: output.marts,
  dictionary,
});

/**
 * One build: the models into a new database file (the lake as views, the close record as tables), their data
 * tests, the marts exported; only when every step succeeded, the new files swapped over the old ones and the
 * dictionary written. A failure leaves the previous warehouse and marts, and no temporary file.
 */
export async function buildOnce(
  options: CheckedBuildOptions,
  hooks: { onStep?: (step: StepResult) => void },
  evaluatedAt: string,
  place: Place,
): Promise<BuildResult> {
  const { output } = options;
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
    const versions = new ModelVersions(db.conn, output.dir, previous, kept, token);
    const intervals = new IncrementalModels(db.conn, output.dir, previous, kept, declared, (m) =>
      versions.isUnchanged(m),
    );
    const { steps, graph } = await modelsStep(db.conn, output, project, { intervals, versions }, hooks.onStep);
    if (unreadable) steps.unshift(unreadableStep(target, unreadable, hooks.onStep));
    const plan = exportPlan(options, { intervals, versions, previous }, token);
    const exported = succeeded(steps)
      ? await exportMarts(db.conn, graph.marts, place.marts, changes, plan, hooks.onStep)
      : { steps: [], outputs: [], fileTokens: new Map<string, string>() };
    steps.push(...exported.steps);
    let ok = succeeded(steps);
    const docs = ok ? await modelDocs(db.conn, graph.models, graph.tests) : [];
    // a store's working copy keeps the warehouse in pieces too (seed.ts), stamped in the states first
    const seeding = ok && place.dictionary && keepsSeed(output);
    const seedMonths = seeding ? seedPlan(graph.models, intervals, previous, token) : new Map<string, SeedMonths>();
    if (ok) await writeStates(db.conn, withFileTokens(versions.stamped(intervals.states), exported.fileTokens));
    if (seeding) {
      const seeded = await seedStep(db.conn, output, token, seedMonths, changes, hooks.onStep);
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
      if (place.dictionary) writeDictionary(join(output.docs, 'models.md'), docs);
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

const succeeded = (steps: readonly StepResult[]) => steps.every((s) => s.status !== 'error');

/** `states` with each mart's whole-file token (export-marts.ts); a mart without one keeps none. */
function withFileTokens(states: Map<string, ModelState>, tokens: Map<string, string>): Map<string, ModelState> {
  for (const [name, state] of states) state.exportedFile = tokens.get(name);
  return states;
}

function resultOf(ok: boolean, asOf: string, warehouse: string, marts: string[], steps: StepResult[]): BuildResult {
  const error = steps.find((s) => s.status === 'error')?.error;
  const warnings = steps.filter((s) => s.status === 'warn').map((s) => s.error ?? s.name);
  return { ok, asOf, warehouse, marts, steps, warnings, ...(error ? { error } : {}) };
}
