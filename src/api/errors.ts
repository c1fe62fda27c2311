/**
 * Typed API errors. Each carries the operation, the HTTP status (when there was one), the run id
 * and a message a person can act on. Messages never contain secrets (see src/shared/redact.ts).
 */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { ACTIONS, type ApiErrorKind } from './outcomes.js';

export class ApiError extends UserFacingError {
  constructor(
    readonly kind: ApiErrorKind,
    readonly operation: string,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown; retryAfterMs?: number; runId?: string; unreachable?: boolean },
  ) {
    // a 403 is the credential's permission, not a fault: rerunning cannot help, fixing the credential can
    super(
      `${operation}: ${message}`,
      kind === 'authentication' || status === 403 ? ExitCode.auth : ExitCode.failed,
      options,
    );
    this.name = `ApiError(${kind})`;
    this.retryAfterMs = options?.retryAfterMs;
    this.runId = options?.runId;
    this.unreachable = options?.unreachable === true;
  }
  /** A network error where no connection could be made (refused, unknown host), not one cut midway. */
  readonly unreachable: boolean;
  readonly retryAfterMs?: number;
  readonly runId?: string;

  /** Worth another attempt (throttling, server and network faults, timeouts, cut-off bodies): outcomes.ts says. */
  get transient(): boolean {
    return ACTIONS[this.kind] === 'retry';
  }
}

/** The credential is paused (Retry-After) for longer than the client is willing to wait: ms is what is left. */
export class PauseTooLongError extends Error {
  constructor(readonly ms: number) {
    super(`the credential is paused for ${Math.round(ms / 1000)} s`);
    this.name = 'PauseTooLongError';
  }
}

/** A record the schema rejects: names the operation, the field and the value. */
export class RecordParseError extends Error {
  constructor(
    readonly operation: string,
    readonly field: string,
    readonly value: unknown,
    readonly reason: string,
    /** The whole record as the server sent it (for quarantine). */
    readonly record?: unknown,
  ) {
    super(`${operation}: field ${field || '(record)'} ${reason} (value: ${preview(value)})`);
    this.name = 'RecordParseError';
  }
}

export function preview(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The shared rate limiter's Redis (PERKS_REDIS_URL) cannot be reached: the message never holds credentials. */
export class ClusterError extends UserFacingError {}
