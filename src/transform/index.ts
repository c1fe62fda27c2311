/** The model runner: SQL models (sql/) into the warehouse, data tests, mart export, dictionary, read-only queries. */
export { buildWarehouse, warehousePath, type BuildResult } from './build-warehouse.js';
export { readBuildRecord, buildRecordPath, type BuildRecord, type BuildOutcome } from './build-record.js';
export { checkBuildOptions, SegmentThresholds, type BuildOptions, type MartLayout } from './build-options.js';
export type { StepResult, StepStatus } from './run-models.js';
export { describeModels } from './describe-models.js';
export { renderMarkdown, writeDictionary, type ModelDoc } from './dictionary.js';
export { queryWarehouse, type QueryResult } from './read-only-query.js';
export { exportQuery, type BinaryFormat } from './export-query.js';
export { LAKE_STREAMS, lakeViewName, type LakeStream, type LakeColumn } from './lake-streams.js';
export { DEFAULT_SQL_DIR } from './model-files.js';
export { describeIntervals, type IntervalCounts } from './incremental.js';
export { describeKept } from './model-versions.js';
export { describeMonthFiles, type MonthFiles } from './export-months.js';
export { compareWarehouses, describeDifference, type Difference } from './compare-warehouses.js';
export { createLakeViews } from './lake-views.js';
export { LakeReadError, ModelGraphError, QueryError, WarehouseMissingError } from './errors.js';
export { ensureWarehouse, SEED_DIR } from './seed.js';
