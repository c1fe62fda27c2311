/** The lake: typed Parquet partitions landed atomically, plus the run's durable bookkeeping. */
export { lakeColumns, sqlType, type Column, type LakeType } from './columns.js';
export { openPartitionWrite, LAKE_FILE, type PartitionWriter, type PartitionWriteOptions, type CommitResult } from './partition-writer.js';
export { lakeDuckDB, withLakeConnection } from './duckdb.js';
export { writeJsonAtomic, writeFileAtomic, type AtomicWriteOptions } from './atomic-file.js';
export { lakeRoot, stateRoot, runsRoot, quarantineRoot, partitionDir } from './paths.js';
export * from './errors.js';
