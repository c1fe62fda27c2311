/** Write-back errors: one line a person can act on, each with its exit code. */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

export class WritebackError extends UserFacingError {
  constructor(message: string, exitCode: ExitCode = ExitCode.failed, options?: { cause?: unknown }) {
    super(`writeback: ${message}`, exitCode, options);
  }
}

/** A model in sql/writeback/ failed or produced rows that cannot be sent. */
export class WritebackModelError extends WritebackError {
  constructor(
    readonly model: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`model ${model}: ${message}`, ExitCode.failed, options);
  }
}

/** Another write-back holds the output directory. */
export class WritebackLockedError extends WritebackError {
  constructor(lockPath: string, pid: number) {
    super(
      `another write-back (pid ${pid}) is running on this output (${lockPath}); wait for it or remove the lock if that process is gone`,
      ExitCode.locked,
    );
  }
}
