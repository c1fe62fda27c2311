/** The finance close: signing a month off per group, reopening it, and the tamper-evident record of both. */
export {
  closeMonth,
  reopenMonth,
  defaultOperator,
  frozenFigures,
  type CloseOptions,
  type ReopenOptions,
  type FrozenFigures,
  type FrozenFx,
} from './close.js';
export { readCloses, closesInForce, closesPath, closeKey, canonicalJson, hashOf, CloseRecord } from './record.js';
export { CloseInputError, CloseRecordError } from './errors.js';
export { rereadMonth, type Reread } from './reread.js';
