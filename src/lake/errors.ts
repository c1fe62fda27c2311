/**
 * The lake's errors. Problems a person can fix (a full disk, an unwritable or wrong output
 * path, a corrupt state file, a held lock) are UserFacingErrors: one line, what to do, exit code.
 */
import { ExitCode, InputError, UserFacingError } from '../shared/exit-codes.js';

/**
 * The lake kind: files of the lake (or read from it) that cannot be read, written or trusted; exit 1 unless
 * said. Stages that read the lake name their own (CompactionError, LakeReadError) from it.
 */
export class LakeError extends UserFacingError {}

/** A resource schema the lake cannot type: a programming error, found before any call is made. */
export class LakeSchemaError extends Error {
  override name = 'LakeSchemaError';
}

/** A stream, partition, group key or run id that is not a safe path segment. */
export class UnsafePathError extends LakeError {
  constructor(what: string, value: string) {
    super(
      `refusing ${what} ${JSON.stringify(value)}: not a safe path segment (letters, digits, "_", "-", "." and "+" only)`,
    );
  }
}

export class LockedError extends UserFacingError {
  constructor(message: string) {
    super(message, ExitCode.locked);
  }
}

/** Corrupt state is bad input the user fixes (delete the file or run --full-refresh): exit code config (2). */
export class CorruptStateError extends InputError {
  constructor(file: string, reason: string) {
    super(
      `state file ${file} is corrupt (${reason}): delete it to re-extract that stream and group from the start date, or rerun with --full-refresh`,
    );
  }
}

const FULL = /ENOSPC|EDQUOT|No space left on device|Disk quota exceeded/;
const DENIED = /EACCES|EPERM|EROFS|Permission denied|Read-only file system|Operation not permitted/;
const NOT_DIR = /ENOTDIR|Not a directory/;

/**
 * Turns a file-system failure (from node:fs or from DuckDB, which reports errno text) into one
 * clear line; anything else is rethrown as it is. `what` says what was being written.
 */
export function asOutputError(err: unknown, what: string, path: string): unknown {
  if (err instanceof UserFacingError) return err;
  const text = err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` : String(err);
  if (FULL.test(text)) {
    return new UserFacingError(
      `disk full while writing ${what} (${path}): free some space and rerun; committed data is unchanged`,
      ExitCode.failed,
      { cause: err },
    );
  }
  if (DENIED.test(text)) {
    return new UserFacingError(
      `cannot write ${what} (${path}): permission denied or read-only; make the output directory writable or choose another with PERKS_OUTPUT`,
      ExitCode.config,
      { cause: err },
    );
  }
  if (NOT_DIR.test(text)) {
    return new UserFacingError(
      `cannot write ${what} (${path}): a part of the path is a file, not a directory; choose another output directory with PERKS_OUTPUT`,
      ExitCode.config,
      { cause: err },
    );
  }
  return err;
}

/** Runs `work`, mapping file-system failures with asOutputError. */
export async function writingOutput<T>(what: string, path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw asOutputError(err, what, path);
  }
}
