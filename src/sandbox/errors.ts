/** The sandbox's errors: a closed union of codes, each with its status and a Laravel-style body. */
import { VALIDATION_STATUS } from './choices.js';

export type ErrorCode =
  | 'not_found'
  | 'method_not_allowed'
  | 'unauthenticated'
  | 'invalid_client'
  | 'forbidden'
  | 'validation'
  | 'duplicate'
  | 'wrong_state'
  | 'throttled'
  | 'gone'
  | 'too_large'
  | 'injected_fault';

export class SandboxError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string[]>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SandboxError';
  }

  get body(): Record<string, unknown> {
    if (this.code === 'invalid_client')
      return { error: 'invalid_client', error_description: this.message, message: this.message };
    return this.errors ? { message: this.message, errors: this.errors } : { message: this.message };
  }
}

/** A request the fault injector decided never to answer. */
export class HungRequest extends Error {
  constructor() {
    super('request left unanswered (fault injection)');
    this.name = 'HungRequest';
  }
}

export const notFound = (what = 'Not Found') => new SandboxError('not_found', 404, what);

/** A 422 with Laravel's body {message, errors: {field: [..]}}: the first message, and how many more there are. */
export function validationError(errors: Record<string, string[]>): SandboxError {
  const messages = Object.values(errors).flat();
  const more = messages.length > 1 ? ` (and ${messages.length - 1} more error${messages.length > 2 ? 's' : ''})` : '';
  return new SandboxError('validation', VALIDATION_STATUS, `${messages[0]}${more}`, errors);
}

/** A 422 naming one field. */
export const fieldError = (field: string, message: string) => validationError({ [field]: [message] });
