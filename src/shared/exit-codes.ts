/**
 * Exit codes a scheduler can act on (documented in the README).
 */
export const ExitCode = {
  success: 0,
  /** The run failed: API unreachable after retries, a broken model, a failed data test, disk full… */
  failed: 1,
  /** Bad configuration, flags or input: fix the named value and rerun. */
  config: 2,
  /** Authentication failed: the client id/secret were refused (401 on the token request). */
  auth: 3,
  /** Finished, but some records were rejected (write-back 4xx) or quarantined beyond the threshold. */
  partial: 4,
  /** Another run holds the output directory's lock. */
  locked: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error meant for a person: one line, what is wrong and what to do, and the exit code it maps to. */
export class UserFacingError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UserFacingError';
  }
}

export class ConfigError extends UserFacingError {
  constructor(message: string) {
    super(message, ExitCode.config);
    this.name = 'ConfigError';
  }
}
