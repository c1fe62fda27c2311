/** The model runner: SQL models (sql/) into the warehouse, data tests, mart export, dictionary, read-only queries. */
export { buildWarehouse, type BuildResult } from './warehouse/build-warehouse.js';
export { readBuildRecord, buildRecordPath, type BuildRecord, type BuildOutcome } from './warehouse/build-record.js';
export {
  buildSettingsOf,
  checkBuildOptions,
  SegmentThresholds,
  type BuildOptions,
  type BuildSettings,
} from './warehouse/build-options.js';
export type { StepResult, StepStatus, MonthFiles } from './runner/run-models.js';
export { describeModels } from './warehouse/describe-models.js';
export { renderMarkdown, writeDictionary, type ModelDoc } from './export/dictionary.js';
export { queryWarehouse, type QueryResult } from './query/read-only-query.js';
export { exportQuery, type BinaryFormat } from './query/export-query.js';
export { LAKE_STREAMS, lakeViewName, type LakeStream, type LakeColumn } from './sources/lake-streams.js';
export { DEFAULT_SQL_DIR } from './models/model-files.js';
export { describeIntervals, type IntervalCounts } from './incremental/incremental.js';
export { describeKept } from './incremental/model-versions.js';
export { describeMonthFiles } from './export/export-months.js';
export type { MartLayout } from './export/export-marts.js';
export { compareWarehouses, describeDifference, type Difference } from './warehouse/compare-warehouses.js';
export { createLakeViews } from './sources/lake-views.js';
export { LakeReadError, ModelGraphError, QueryError, WarehouseMissingError } from './errors.js';
export { ensureWarehouse, SEED_DIR } from './warehouse/seed.js';
