/** Extract errors: each names the stream and group and says what to do. */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

export class ExtractError extends UserFacingError {
  constructor(message: string, options?: { cause?: unknown; exitCode?: ExitCode }) {
    super(message, options?.exitCode ?? ExitCode.failed, options);
  }
}
