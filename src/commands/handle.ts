/**
 * Wraps a command's work: a UserFacingError becomes one line on stderr and its exit code;
 * anything else is a failure (exit 1) with its message, never a stack full of secrets.
 */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { debugWanted } from '../config/index.js';

export async function handle(work: () => Promise<number | void>): Promise<void> {
  try {
    const code = await work();
    process.exitCode = code ?? ExitCode.success;
  } catch (err) {
    if (err instanceof UserFacingError) {
      process.stderr.write(`perks: ${redact(err.message)}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`perks: failed: ${redact(message)}\n`);
    if (debugWanted() && err instanceof Error && err.stack) process.stderr.write(`${redact(err.stack)}\n`);
    process.exitCode = ExitCode.failed;
  }
}
