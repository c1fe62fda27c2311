/** Errors of the close record and the rates it keeps: one line each, exit code 2, nothing written. */
import { InputError } from '../shared/exit-codes.js';

/** The close record does not verify: a line was changed, removed or reordered (the hash chain says where). */
export class CloseRecordError extends InputError {}

/** PERKS_FX_RATES or PERKS_REPORTING_CURRENCY cannot be read as rates: the message names the line and the value. */
export class FxRatesError extends InputError {}
