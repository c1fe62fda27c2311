/** Extract: stream definitions run incrementally into the lake. */
export { extract, type ExtractSessionOptions } from './session.js';
export { runExtract, selectStreams, type ExtractResult } from './runner.js';
export { PROGRESS_MODES, progressMode, progressReporter, type ProgressMode } from './progress.js';
export { formatExtractSummary } from './summary.js';
export type { ExtractOptions, Event } from './run-context.js';
export type { StreamResult, GroupTally } from './result.js';
export * from './date-windows.js';
export { quarantineShare, type QuarantineShare } from './quarantine-share.js';
export { planExtract, formatPlan, type Plan, type PlanRow } from './planning/plan.js';
export { parseShard, unsharedLimitWarning, shardOfUser, fnv1a32, type Shard } from './per-user/shard.js';
export { acquireWorkLock, scopesOverlap, scopeKey, type WorkScope } from './per-user/work-lock.js';
export { acceptCommand, heldMessage, type HeldMonth } from './held-months.js';
export {
  allowanceText,
  changeCounts,
  currencyLine,
  money,
  type MonthChange,
  type CurrencyChange,
  type Side,
} from './windows/settled-guard.js';
