/** Object storage (S3 API) as the system of record: the output in a store, a local working copy as cache. */
export { resolveOutput, finishOutput } from './entry.js';
export { resolveOutputLazily, finishOutputLazily, type OutputLocation } from './lazy.js';
export { StoreSession, type PublishResult } from './session.js';
export { StoreClient, clientSettings, type StoreCounters } from './client.js';
export { parseStoreUrl, isStoreUrl, workingCopyDir, type StoreUrl } from './url.js';
export { StoreError, StoreLockedError, storeFailure } from './errors.js';
export { STORE_FORMAT, parseRemoteIndex, type RemoteIndex } from './indexes.js';
export { INDEX, INTENT, LEASE, WAL, COMMANDS, storeCommandName } from './layout.js';
export type { StreamManifest } from './manifests.js';
export { checkStore, storeSummary, type StoreCheck, type Finding } from './check.js';
export type { ConditionalWrites } from './probe.js';
