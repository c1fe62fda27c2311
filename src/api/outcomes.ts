/**
 * How each HTTP outcome is handled, in one table (guide example 5), the one rule of retrying: the client's
 * retries and every `ApiError.transient` read it.
 * 401 → a new token once, then retry; 429, 5xx, network, timeout, cut-off body → retry with backoff;
 * other 4xx → stop.
 */

/** What went wrong with a call, as the client tells it apart. */
export type ApiErrorKind =
  'authentication' | 'throttled' | 'validation' | 'client' | 'server' | 'network' | 'timeout' | 'parse';

export type Action = 'reauthenticate' | 'retry' | 'stop';

export function kindOfStatus(status: number): ApiErrorKind {
  if (status === 401) return 'authentication';
  if (status === 429) return 'throttled';
  if (status === 422 || status === 400) return 'validation';
  if (status >= 500) return 'server';
  return 'client';
}

export const ACTIONS: Record<ApiErrorKind, Action> = {
  authentication: 'reauthenticate',
  throttled: 'retry',
  server: 'retry',
  network: 'retry',
  timeout: 'retry',
  parse: 'retry',
  validation: 'stop',
  client: 'stop',
};

/**
 * Parses Retry-After: delta seconds or an HTTP date. Undefined when absent or unreadable. A date is read
 * against our clock and against the answer's own Date header (the server's clock, whole seconds, so
 * at most a second behind its true time), and the longer wait wins: a client clock ahead of the
 * server's would otherwise end the wait early by the difference.
 */
export function parseRetryAfter(
  value: string | null,
  now = Date.now(),
  serverDate?: string | null,
): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  const sent = serverDate ? Date.parse(serverDate) : Number.NaN;
  return Math.max(0, at - now, Number.isNaN(sent) ? 0 : at - sent);
}
