/**
 * A store's working copy keeps the warehouse in pieces too (seed.ts): which models the seed keeps by month,
 * and the seed staged as a step of the build.
 */
import type { DuckDBConnection } from '../../shared/duckdb.js';
import { describeSeedFiles, SEED_DIR, stageSeed, type SeedMonths } from './seed.js';
import { step } from './build-steps.js';
import { firstLine } from '../errors.js';
import type { Node } from '../models/model-graph.js';
import type { StepResult } from '../runner/run-models.js';
import type { IncrementalModels } from '../incremental/incremental.js';
import type { ModelState } from '../incremental/build-state.js';
import type { FileChange } from '../export/atomic-files.js';
import type { Output } from '../../output/index.js';

/**
 * The models the seed keeps by month (those built by intervals), with the months this build replaced; each
 * one's state stamped with the seed's token.
 */
export function seedPlan(
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
export async function seedStep(
  conn: DuckDBConnection,
  output: Output,
  token: string,
  months: Map<string, SeedMonths>,
  changes: FileChange[],
  onStep?: (step: StepResult) => void,
): Promise<StepResult> {
  const started = Date.now();
  try {
    const files = await stageSeed(conn, output, token, months, changes);
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
