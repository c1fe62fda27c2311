/**
 * One HTTP exchange: timeout, whole body read, JSON parsed. Failures become typed ApiErrors with
 * the kind that decides retrying (see outcomes.ts). No secret reaches an error message.
 */
import { ApiError } from './errors.js';
import { kindOfStatus, parseRetryAfter } from './outcomes.js';

export interface HttpRequest {
  operation: string;
  method: string;
  url: string;
  body: unknown;
  token?: string;
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  json: unknown;
  bytes: number;
  headers: Headers;
}

export async function send(req: HttpRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers,
      body: JSON.stringify(req.body ?? {}),
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    if (timedOut) throw new ApiError('timeout', req.operation, `no answer within ${req.timeoutMs} ms`, undefined, { cause: err });
    const cause = err instanceof Error ? (err.cause as (Error & { code?: string }) | undefined) : undefined;
    const detail = cause?.message ?? (err instanceof Error ? err.message : String(err));
    if (isUnreachable(cause)) throw new ApiError('network', req.operation, `could not reach the API (${detail})`, undefined, { cause: err, unreachable: true });
    throw new ApiError('network', req.operation, `the connection to the API was cut (${detail})`, undefined, { cause: err });
  }
  const bytes = Buffer.byteLength(text);
  // Every answer of this API is a JSON envelope: an empty 200 (not a 204) is a body cut off before its
  // first byte, retried like a truncated one (the write-back checks upstream before posting again).
  if (res.ok && res.status !== 204 && text.trim() === '') {
    throw new ApiError('parse', req.operation, `HTTP ${res.status} with an empty body`, res.status);
  }
  let json: unknown;
  try {
    json = text.length ? JSON.parse(text) : undefined;
  } catch (err) {
    if (res.ok) throw new ApiError('parse', req.operation, `the body is not complete JSON (${bytes} bytes)`, res.status, { cause: err });
    json = undefined;
  }
  if (!res.ok) {
    const kind = kindOfStatus(res.status);
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
    throw new ApiError(kind, req.operation, describe(res.status, json), res.status, { retryAfterMs });
  }
  return { status: res.status, json, bytes, headers: res.headers };
}

/**
 * No connection could be made at all (refused, unknown host, no route), as opposed to a connection the
 * API opened and then cut: only the first means "the API is not there" and earns a shorter retry budget.
 */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

function isUnreachable(cause: (Error & { code?: string; errors?: Array<{ code?: string }> }) | undefined): boolean {
  if (!cause) return false;
  if (cause.code && UNREACHABLE.has(cause.code)) return true;
  // Happy eyeballs tries every address and reports them together.
  return Array.isArray(cause.errors) && cause.errors.length > 0 && cause.errors.every((e) => e.code !== undefined && UNREACHABLE.has(e.code));
}

function describe(status: number, json: unknown): string {
  const message = typeof json === 'object' && json !== null && 'message' in json ? String((json as { message: unknown }).message) : '';
  const errors = typeof json === 'object' && json !== null && 'errors' in json ? JSON.stringify((json as { errors: unknown }).errors) : '';
  const hint: Record<number, string> = {
    401: 'not authenticated: check PERKS_CLIENT_ID and PERKS_CLIENT_SECRET',
    403: 'forbidden: the credential cannot reach this group (check PERKS_GROUP_IDS)',
    404: 'not found',
    405: 'method not allowed for this path',
    429: 'throttled by the API',
  };
  return [`HTTP ${status}`, hint[status], message, errors.slice(0, 300)].filter(Boolean).join(': ');
}
