/** The finance close: signing a month off per group and reopening it (the record itself: src/closes). */
export { closeMonth, reopenMonth, defaultOperator, type CloseOptions, type ReopenOptions } from './close.js';
export { CloseInputError } from './errors.js';
export { rereadMonth } from './reread.js';
export { refreshCredit, creditHolders, type CreditRefresh } from './credit-refresh.js';
