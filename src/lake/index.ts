/**
 * The lake: typed Parquet partitions landed atomically, plus the run's durable bookkeeping
 * (state, run manifests, quarantine, the output directory's lock and startup hygiene).
 */
export { lakeColumns, sqlType, type Column } from './columns.js';
export { EXTRA_COLUMN } from './projector.js';
export {
  addFieldsSeen,
  foldRun,
  readSchemaHistory,
  writeSchemaHistory,
  schemaHistoryPath,
  type RunSeen,
  type StreamSeen,
} from './schema-history.js';
export { changeLine, recentChanges, runChanges, undeclaredFields, type SchemaChange } from './schema-changes.js';
export { openPartitionWrite } from './partition-writer.js';
export { withLakeConnection } from './duckdb.js';
export { writeJsonAtomic, writeFileAtomic } from './atomic-file.js';
export { StateStore } from './state-store.js';
export {
  writeRunManifest,
  runManifestPath,
  readRunManifests,
  readRunManifestFile,
  RunManifest,
  MANIFEST_KEYS,
} from './run-manifest.js';
export { quarantineRecord, quarantineFile } from './quarantine.js';
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
} from './lock.js';
export { cleanTemporaryFiles } from './temp-files.js';
export { CLOSE_STAMPS, latestStamp, nextRunStamp, recordRunStamp, WRITEBACK_STAMPS } from './run-stamps.js';
export { ensureLakeDir, tightenLake, LAKE_FILE_MODE } from './modes.js';
export { rewriteParquet, usedParameters, type Rewrite } from './rewrite.js';
export { lakeRoot, stateRoot, quarantineRoot, partitionDir, literalPath, globUnder } from './paths.js';
export { relativeStreamDir, scanFilesSql, scanSql, streamDir, streamGlob } from './streams.js';
export {
  appendPartition,
  groupsOf,
  inGroups,
  latestSnapshotFiles,
  monthPartitions,
  snapshotPartition,
  snapshotSets,
  snapshotsOf,
  streamFiles,
  type Partition,
  type Snapshot,
} from './partitions.js';
export { personalKey, personalKeySql } from './personal-keys.js';
export { oweErasures, owedErasures, settleErasures, OwedErasure } from './erasure-queue.js';
export * from './errors.js';
export { inTurn } from './file-turns.js';
export { versionedName, successorOf } from './file-names.js';
export { readJournal, journalPath, withJournal, switchFiles, finishSwitch, type Journal } from './journal.js';
export { damagedFiles, isDamagedParquet, partitionsOf, repairCommand } from './damaged.js';
export {
  MONTH_LAYOUTS,
  placeDay,
  dayFiles,
  hasLegacyLayout,
  dayStem,
  monthFileName,
  DAY_FILE,
  MONTH_FILE,
  monthFileInfo,
  monthFileDays,
  type MonthLayout,
} from './month-layout.js';
