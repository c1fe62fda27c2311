/**
 * `perks models`: the data dictionary without a lake. The models are built in memory over empty, typed
 * lake views, which checks that every one of them compiles and gives its exact columns and types.
 */
import { DuckDBInstance } from '../../shared/duckdb.js';
import { DEFAULTS } from '../../config/index.js';
import { SegmentThresholds, setModelVariables } from './build-options.js';
import { todayUtc } from '../../shared/clock.js';
import { collectTests } from '../runner/data-tests.js';
import { modelDocs, type ModelDoc } from '../export/dictionary.js';
import { ModelGraphError } from '../errors.js';
import { createLakeViews, lakeViewNames } from '../sources/lake-views.js';
import { CLOSE_TABLES, createCloseTables } from '../sources/close-tables.js';
import { DEFAULT_SQL_DIR, readProject } from '../models/model-files.js';
import { resolveGraph } from '../models/model-graph.js';
import { runModels } from '../runner/run-models.js';

export async function describeModels(sqlDir: string = DEFAULT_SQL_DIR): Promise<ModelDoc[]> {
  const project = readProject(sqlDir);
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    // The dictionary describes the models, not this environment's setting (nor an output): the defaults.
    const defaults = {
      asOf: todayUtc(),
      segments: SegmentThresholds.parse({}),
      revenueStatuses: DEFAULTS.revenueStatuses,
    };
    await setModelVariables(conn, defaults);
    await createLakeViews(conn, null);
    await createCloseTables(conn, null);
    const sources = [...lakeViewNames(), ...CLOSE_TABLES];
    const graph = await resolveGraph(conn, project, sources);
    const tests = collectTests(graph.models, graph.tests);
    const steps = await runModels(conn, graph.models, tests, { runTests: false, lakeViews: sources });
    const failed = steps.find((s) => s.status === 'error');
    if (failed) throw new ModelGraphError(failed.error ?? `model ${failed.name} failed`);
    return await modelDocs(conn, graph.models, tests);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
