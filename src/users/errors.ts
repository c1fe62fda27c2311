/** The user-administration errors: bad input (exit 2) and transitions the lifecycle forbids (exit 2). */
import { ApiError } from '../api/index.js';
import { InputError } from '../shared/exit-codes.js';

/** A flag, a file or a row is wrong: the message names it and what to do. */
export class UsersInputError extends InputError {}

/** The spec's lifecycle table forbids the command from the state the local data shows; nothing was sent. */
export class LifecycleRefusal extends InputError {}

/**
 * The platform answered and refused the call: audited as rejected and reported per user. Faults worth another
 * attempt and a refused credential are not the user's answer: they are thrown as they are.
 */
export function isRefusal(err: unknown): err is ApiError {
  return err instanceof ApiError && !err.transient && err.kind !== 'authentication';
}
