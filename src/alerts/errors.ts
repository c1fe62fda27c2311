/** Alert errors: one line a person can act on, each with its exit code. */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

/** `perks alert test` with no webhook, or a malformed one: fix PERKS_ALERT_WEBHOOK (exit 2). */
export class AlertConfigError extends UserFacingError {
  constructor(message: string) {
    super(`alerts: ${message}`, ExitCode.config);
    this.name = 'AlertConfigError';
  }
}

/** `perks alert test` whose sample did not reach every webhook (exit 1). */
export class AlertDeliveryError extends UserFacingError {
  constructor(message: string) {
    super(`alerts: ${message}`, ExitCode.failed);
    this.name = 'AlertDeliveryError';
  }
}
