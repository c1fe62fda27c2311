/**
 * The close record and what it holds: the months finance signed off per group (\`<out>/closes/closes.jsonl\`,
 * append-only, hash-chained), the figures each close froze, the exchange rates, and the figures' shape. Below
 * everyone who reads it: the report, the build, the status and the close workflow (src/close).
 */
export {
  readCloses,
  appendClose,
  closesInForce,
  closesPath,
  closeKey,
  canonicalJson,
  hashOf,
  CloseRecord,
} from './record.js';
export { forcedBecause, frozenFigures, type FrozenFigures, type FrozenFx, type Reread } from './frozen-figures.js';
export { fxRatesFrom, rateOf, type FxRates } from './fx-rates.js';
export * from './figures.js';
export { CloseRecordError, FxRatesError } from './errors.js';
export {
  MONTH_STATES,
  FLOOR_MONTH,
  extractStateOf,
  monthStateOf,
  monthStateWord,
  monthStatesOf,
  monthStatesText,
  nextMonth,
  statesOverGroups,
  monthDays,
  finalAfter,
  groupsWithOrdersState,
  readOrdersState,
  type MonthState,
  type MonthWithState,
  type ExtractState,
  type ReadOrdersState,
} from './month-state.js';
