/** User administration over the client: import in bulk, look up, change, offboard, anonymise; paced and audited. */
export {
  importUsers,
  BULK_SIZE,
  type ImportOptions,
  type ImportResult,
  type ImportPhase,
  type ImportedUser,
} from './import.js';
export { runUserCommand, USER_COMMANDS, type UserCommand, type ActionOptions, type ActionResult } from './actions.js';
export { addressOf, type Address, type AddressFlags } from './address.js';
export { appendAudit, readAudit, auditPath, type AuditEntry } from './audit.js';
export { TRANSITIONS, stateOfStatus, checkTransition, type UserState, type Transition } from './lifecycle.js';
export { localUser } from './local-state.js';
export { readImportFile, type ImportRow, type RowRejection } from './rows.js';
export { formatImport, formatAction, type Format } from './format.js';
export { importProgress } from './progress.js';
export { UsersInputError, LifecycleRefusal } from './errors.js';
export { createOneUser, type CreateOptions } from './create.js';
export { userOrders, formatOrders, type OrdersOptions } from './orders.js';
export { usersByEmail, type Lookup } from './directory.js';
