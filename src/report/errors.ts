/** Errors of the revenue report. Every bad input is one line a person can act on, with exit code 2. */
import { InputError } from '../shared/exit-codes.js';

/** A bad --month or --group, a missing warehouse, or a month the warehouse does not hold. */
export class ReportInputError extends InputError {}
