/** Errors of `perks forget`: what to fix, in one line. */
import { ConfigError } from '../shared/exit-codes.js';

/** A user id that is not one (exit code 2). */
export class ForgetInputError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'ForgetInputError';
  }
}
