/** Compaction: closed months of the lake rewritten into one checked file per group and month (docs/assumptions.md, ## Lake). */
export { compactLake, type CompactOptions, type CompactResult, type StreamCompaction } from './compact.js';
export { readJournal, journalPath, finishSwitch, type Journal } from '../lake/index.js';
export { fingerprint, sameFingerprint, type Fingerprint } from './fingerprint.js';
export { CompactionError } from './errors.js';
export { readConsistently, type ConsistentReadOptions } from './reader.js';
export { applyRetention, KEEP_DAYS, SNAPSHOT_STREAMS, type StreamRetention } from './retention.js';
