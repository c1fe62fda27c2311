/**
 * The store's errors: every failure of a store request becomes one line naming the store (never a
 * credential) and an exit code a scheduler can act on (README, exit codes):
 *
 * | what | exit |
 * |---|---|
 * | the store cannot be reached (DNS, refused, timeout) | 1 (failed; a rerun is safe) |
 * | credentials refused (unknown key, bad signature, expired token), none found, or no permission | 3 |
 * | the bucket does not exist, a prefix written by a newer format, a clock the service refuses, no region | 2 |
 * | another machine holds the store's lock, or published while this command ran | 5 |
 */
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';

export class StoreError extends UserFacingError {
  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(redact(message), exitCode, options);
    this.name = 'StoreError';
  }
}

/** Another machine (or process) holds the store's lease, or committed while this command ran. */
export class StoreLockedError extends StoreError {
  constructor(message: string) {
    super(message, ExitCode.locked);
    this.name = 'StoreLockedError';
  }
}

/** A conditional write lost its race (HTTP 412): the caller decides what it means. */
export class PreconditionFailed extends Error {
  override name = 'PreconditionFailed';
}

interface SdkError {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
}

const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'TimeoutError',
  'RequestTimeout',
]);
const CREDENTIALS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'CredentialsProviderError',
]);

/** The error's code: the service's (NoSuchBucket…), else the system's (ECONNREFUSED…). */
export function errorCode(err: unknown): string {
  const e = (err ?? {}) as SdkError;
  const nested = (e.cause ?? {}) as SdkError;
  return e.Code ?? (e.code && e.code !== 'ERR_UNKNOWN' ? e.code : undefined) ?? nested.code ?? e.name ?? 'Error';
}

export function httpStatus(err: unknown): number | undefined {
  return (err as SdkError | undefined)?.$metadata?.httpStatusCode;
}

export function isNotFound(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'NoSuchKey' || code === 'NotFound' || (httpStatus(err) === 404 && code !== 'NoSuchBucket');
}

export function isPreconditionFailed(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'PreconditionFailed' || code === 'ConditionalRequestConflict' || httpStatus(err) === 412;
}

/**
 * One line for a failed request: what was asked (`op`, e.g. "read s3://b/p/_perks/index.json"), what the
 * store said, and what to do. `where` names the store (URL and endpoint, no credentials).
 */
export function storeFailure(err: unknown, op: string, where: string): StoreError {
  if (err instanceof StoreError) return err;
  const code = errorCode(err);
  const status = httpStatus(err);
  const said = firstLine((err as SdkError)?.message ?? String(err));
  if (NETWORK.has(code) || (status === undefined && /socket|connect|network|timed? ?out/i.test(said)))
    return new StoreError(
      `cannot reach the store ${where} (${code}): check the address and the network; a rerun is safe`,
      ExitCode.failed,
      { cause: err },
    );
  if (code === 'NoSuchBucket')
    return new StoreError(`the bucket of ${where} does not exist: create it, or fix PERKS_OUTPUT`, ExitCode.config, {
      cause: err,
    });
  if (CREDENTIALS.has(code) || /could not load credentials/i.test(said))
    return new StoreError(
      `the store ${where} refused the credentials (${code}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) to a key it knows`,
      ExitCode.auth,
      { cause: err },
    );
  // before the 403s: S3 answers a skewed clock with 403 too
  if (code === 'RequestTimeTooSkewed')
    return new StoreError(
      `the store ${where} refuses this machine's clock (more than 15 minutes off, RequestTimeTooSkewed): set the clock right (NTP) and rerun`,
      ExitCode.config,
      { cause: err },
    );
  if (code === 'AccessDenied' || code === 'AllAccessDisabled' || status === 403)
    return new StoreError(
      `no permission to ${op} (${code}): the credentials need s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket on the prefix`,
      ExitCode.auth,
      { cause: err },
    );
  if (/region is missing/i.test(said))
    return new StoreError(`no region for ${where}: set AWS_REGION (e.g. eu-west-1)`, ExitCode.config, { cause: err });
  return new StoreError(
    `store request failed: ${op}: ${code}${status ? ` (HTTP ${status})` : ''}: ${said}`,
    ExitCode.failed,
    {
      cause: err,
    },
  );
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}
