/**
 * The finance close: signing a month off per group, reopening it, and the workflow of `perks close` and
 * `perks reopen` (workflow.ts). The record itself: src/closes.
 */
export { closeMonth, reopenMonth, defaultOperator, type CloseOptions, type ReopenOptions } from './close.js';
export { CloseHeldError, CloseInputError } from './errors.js';
export { rereadMonth, type MonthReread } from './reread.js';
export { refreshCredit, creditHolders, type CreditRefresh } from './credit-refresh.js';
export {
  runClose,
  runReopen,
  type CloseRequest,
  type CloseOutcome,
  type ReopenOutcome,
  type RereadBeforeClose,
} from './workflow.js';
