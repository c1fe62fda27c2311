/**
 * The interactions write-back: what sql/writeback/ says goes back to the platform, exactly once,
 * with every outcome in the ledger (`<out>/lake/writeback_ledger/`).
 */
export { runWriteback } from './run.js';
export type { WritebackOptions, WritebackResult, TypeCount, Rejection } from './result.js';
export { verifyWriteback, type VerifyResult, type SentRow } from './verify.js';
export { interactionId, ID_NAMESPACE, WritebackRow, LedgerEntry, type LedgerStatus } from './rows.js';
export { parseTypeMap, TYPES_ENV, type TypeMap } from './settings.js';
export { ledgerDirs, LEDGER_VIEW } from './ledger.js';
export { DEFAULT_SQL_DIR } from './models.js';
export { SETTLED_MESSAGE } from './rows.js';
export { heldLine, SYSTEMATIC_REJECTIONS, type HeldKind } from './held-kinds.js';
export type { Unresolved } from './recover.js';
export { WritebackError, WritebackModelError, WritebackLockedError } from './errors.js';
