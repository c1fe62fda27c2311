/** Errors of the finance close. Every refusal is one line a person can act on, exit code 2, nothing written. */
import { InputError } from '../shared/exit-codes.js';

/** A month that cannot be closed or reopened now, an unknown group, a missing flag. */
export class CloseInputError extends InputError {}
