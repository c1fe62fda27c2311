/** Errors of `perks forget`: what to fix, in one line. */
import { InputError } from '../shared/exit-codes.js';

/** A user id that is not one (exit code 2). */
export class ForgetInputError extends InputError {}
