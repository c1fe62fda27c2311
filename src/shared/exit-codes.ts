/**
 * Exit codes a scheduler can act on (documented in the README).
 */
export const ExitCode = {
  success: 0,
  /** The run failed: API unreachable after retries, a broken model, a failed data test, disk full… */
  failed: 1,
  /** Bad configuration, flags or input: fix the named value and rerun. */
  config: 2,
  /** Authentication failed: the client id/secret were refused (401), or they may not reach a group (403). */
  auth: 3,
  /** Finished, but some records were rejected (write-back 4xx) or quarantined beyond the threshold. */
  partial: 4,
  /** Another run holds the output directory's lock. */
  locked: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An error meant for a person: one line, what is wrong and what to do, and the exit code it maps to (a failure,
 * exit 1, unless said). Its name is its class's: a stage's error is one line, `class CompactionError extends
 * UserFacingError {}`. The kinds a person acts on differently have one base each: InputError (here), ApiError
 * (src/api/errors.ts), LakeError (src/lake/errors.ts).
 */
export class UserFacingError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.failed,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input (a flag, a setting, a file, a value the data refuses): fix the named value and rerun, exit 2. */
export class InputError extends UserFacingError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.config, options);
  }
}

/** A setting or flag of the configuration (src/config) that is missing or malformed. */
export class ConfigError extends InputError {}
