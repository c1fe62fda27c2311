/**
 * The lake: typed Parquet partitions landed atomically, plus the run's durable bookkeeping
 * (state, run manifests, quarantine, the output directory's lock and startup hygiene).
 */
export { lakeColumns, sqlType, type Column, type LakeType } from './columns.js';
export { EXTRA_COLUMN, JSON_TYPES, type FieldSeen, type FieldsSeen, type JsonType } from './projector.js';
export {
  addFieldsSeen,
  foldRun,
  readSchemaHistory,
  writeSchemaHistory,
  schemaHistoryPath,
  SchemaHistory,
  type FieldHistory,
  type Mark,
  type RunSeen,
  type StreamHistory,
  type StreamSeen,
} from './schema-history.js';
export { changeLine, recentChanges, runChanges, undeclaredFields, type SchemaChange } from './schema-changes.js';
export {
  openPartitionWrite,
  type PartitionWriter,
  type PartitionWriteOptions,
  type CommitResult,
} from './partition-writer.js';
export { lakeDuckDB, withLakeConnection } from './duckdb.js';
export { writeJsonAtomic, writeFileAtomic, type AtomicWriteOptions } from './atomic-file.js';
export { StateStore } from './state-store.js';
export {
  writeRunManifest,
  runManifestPath,
  readRunManifests,
  readRunManifestFile,
  RunManifest,
  MANIFEST_KEYS,
} from './run-manifest.js';
export {
  quarantineRecord,
  quarantineFile,
  issuesOf,
  type QuarantineEntry,
  type QuarantineIssue,
  type QuarantineReason,
} from './quarantine.js';
export {
  acquireLock,
  lockPath,
  heartbeatAgeMs,
  readLockHolder,
  staleReason,
  pidAlive,
  STALE_LOCK_MS,
  type Lock,
  type LockHolder,
  type LockOptions,
} from './lock.js';
export { cleanTemporaryFiles } from './temp-files.js';
export { CLOSE_STAMPS, latestStamp, nextRunStamp, recordRunStamp, WRITEBACK_STAMPS } from './run-stamps.js';
export { ensureLakeDir, tightenLake, LAKE_DIR_MODE, LAKE_FILE_MODE } from './modes.js';
export { rewriteParquet, usedParameters, type Rewrite } from './rewrite.js';
export {
  lakeRoot,
  stateRoot,
  runsRoot,
  quarantineRoot,
  partitionDir,
  safeSegment,
  literalPath,
  globUnder,
} from './paths.js';
export { groupPartition, relativeStreamDir, scanSql, streamDir, streamGlob, type ScanOptions } from './streams.js';
export { personalKey, personalKeySql } from './personal-keys.js';
export { oweErasures, owedErasures, settleErasures, OwedErasure } from './erasure-queue.js';
export * from './errors.js';
export { inTurn } from './file-turns.js';
export { versionedName, successorOf, versionsOf, stemOf } from './file-names.js';
export {
  readJournal,
  journalPath,
  withJournal,
  switchFiles,
  finishSwitch,
  relativeToLake,
  type Journal,
  type Switch,
} from './journal.js';
export { damagedFiles, isDamagedParquet, partitionsOf, repairCommand } from './damaged.js';
export {
  MONTH_LAYOUTS,
  placeDay,
  dayFiles,
  hasLegacyLayout,
  monthFileIn,
  dayStem,
  monthFileName,
  DAY_FILE,
  MONTH_FILE,
  monthFileInfo,
  monthFileDays,
  type MonthLayout,
  type DayPlacement,
} from './month-layout.js';
