/** Errors of the finance close. Every refusal is one line a person can act on, exit code 2, nothing written. */
import { InputError } from '../shared/exit-codes.js';

/** A month that cannot be closed or reopened now, an unknown group, a missing flag. */
export class CloseInputError extends InputError {}

/**
 * The re-read before the close would change more of the month than the settled-change guard allows: not applied,
 * nothing closed. `figures`: the lines (per group and currency, before → after) the command prints before it.
 */
export class CloseHeldError extends CloseInputError {
  constructor(
    message: string,
    readonly figures: readonly string[],
  ) {
    super(message);
  }
}
