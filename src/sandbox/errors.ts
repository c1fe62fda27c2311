/** The sandbox's errors: a closed union of codes, each with its status and a Laravel-style body. */
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
