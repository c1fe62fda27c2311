/**
 * The steps of a build before the export: the lake as views, the models' graph, every model and its data tests;
 * and `step`, which tells `onStep` of each step as it ends.
 */
import type { DuckDBConnection } from '../../shared/duckdb.js';
import { collectTests } from '../runner/data-tests.js';
import { createLakeViews, lakeViewNames } from '../sources/lake-views.js';
import { narrowToLatestSnapshots, widenLatestSnapshots } from '../incremental/latest-snapshots.js';
import { CLOSE_TABLES, createCloseTables } from '../sources/close-tables.js';
import type { Project } from '../models/model-files.js';
import { resolveGraph } from '../models/model-graph.js';
import { runModels, type StepResult } from '../runner/run-models.js';
import type { ModelVersions } from '../incremental/model-versions.js';
import type { IncrementalModels } from '../incremental/incremental.js';
import { withJournal } from '../../lake/index.js';
import type { Output } from '../../output/index.js';

/**
 * The lake views, then every model and its data tests. The models read the lake while no switch replaces
 * files in it (another worker of the round may be landing its groups): never a window twice, nor a file gone
 * under a query (src/lake/journal.ts).
 */
export async function modelsStep(
  conn: DuckDBConnection,
  output: Output,
  project: Project,
  builds: { intervals: IncrementalModels; versions: ModelVersions },
  onStep?: (step: StepResult) => void,
) {
  return withJournal(output.dir, async () => {
    const { lakeStep, graph, latest } = await lakeViewsStep(conn, output, project, onStep);
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
    await widenLatestSnapshots(conn, output.dir, latest);
    return { steps, graph };
  });
}

/**
 * The lake as views of the build (one per stream), as its first step: how many files they read; then the
 * models' graph, and the views its models read only the latest snapshots of, narrowed (latest-snapshots.ts).
 */
async function lakeViewsStep(
  conn: DuckDBConnection,
  output: Output,
  project: Project,
  onStep?: (step: StepResult) => void,
) {
  const started = Date.now();
  const lake = await createLakeViews(conn, output.lake);
  const graph = await modelGraph(conn, output, project);
  const latest = await narrowToLatestSnapshots(conn, output.dir, [...graph.models, ...graph.singular]);
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
async function modelGraph(conn: DuckDBConnection, output: Output, project: Project) {
  await createCloseTables(conn, output);
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

export function step(result: StepResult, onStep?: (step: StepResult) => void): StepResult {
  onStep?.(result);
  return result;
}
