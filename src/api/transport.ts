/**
 * One HTTP exchange: timeout, whole body read, JSON parsed. Failures become typed ApiErrors with
 * the kind that decides retrying (see outcomes.ts). No secret reaches an error message.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ApiError, PauseTooLongError } from './errors.js';
import { kindOfStatus, parseRetryAfter } from './outcomes.js';

export interface HttpRequest {
  operation: string;
  method: string;
  url: string;
  body: unknown;
  token?: string;
  timeoutMs: number;
}

/**
 * What the limiter needs to see of an exchange as it happens, not once its promise settles: whether the
 * request may be written now, and a 429 the moment its head arrives (before its body, before any other
 * callback can write another request).
 */
export interface WireHooks {
  /**
   * Called once the socket is connected, just before the request is written: undefined to write at once,
   * or a promise that resolves when it may be written (a pause began since the limiter admitted it) or
   * rejects to give the request up unsent.
   */
  beforeWrite?: () => Promise<number | void> | undefined;
  /** A 429's head arrived, with its Retry-After in ms (undefined: none or unreadable). */
  onThrottle?: (retryAfterMs: number | undefined) => void;
  /** For tests and diagnostics: each write, and each 429 received (see WireEvent). */
  observe?: (event: WireEvent) => void;
}

/**
 * A request handed to the socket, or a 429 received, on one connection: `port` is the connection's local
 * port and `seq` the request's number on it (1, 2, … with keep-alive), which a server sees as the remote
 * port and the order of requests on that connection. Times are Date.now().
 */
export type WireEvent =
  /** `checkedAt`, clustered: when the last look for a pause recorded in Redis was sent (hrNow). */
  | { kind: 'write'; operation: string; at: number; port: number; seq: number; checkedAt?: number }
  | { kind: '429'; operation: string; at: number; port: number; seq: number; retryAfterMs?: number }
  /** Clustered: the pause a 429 asked for is recorded in Redis (at `recordedAt`, hrNow), where writes look first. */
  | { kind: 'shared'; at: number; pauseMs: number; recordedAt: number };

/** Epoch milliseconds with a fraction, monotonic within a process: orders a write's look in Redis against a pause's record. */
export const hrNow = () => performance.timeOrigin + performance.now();

/** The answer's headers, looked up case-insensitively. */
export interface ResponseHeaders {
  get(name: string): string | null;
}

export interface HttpResponse {
  status: number;
  json: unknown;
  bytes: number;
  headers: ResponseHeaders;
}

/**
 * node:http with kept-alive connections rather than fetch: at a high limit (the sandbox, a bench) the
 * client spends a third less CPU per call, and at 120 calls/min nothing changes but the connection reuse.
 */
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

export async function send(req: HttpRequest, hooks: WireHooks = {}): Promise<HttpResponse> {
  const payload = Buffer.from(JSON.stringify(req.body ?? {}));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'content-length': payload.length,
  };
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  let res: IncomingMessage;
  let raw: Buffer;
  let retryAfterMs: number | undefined;
  try {
    ({ res, raw, retryAfterMs } = await exchange(req, headers, payload, hooks));
  } catch (err) {
    if (err instanceof PauseTooLongError) throw err; // given up unsent (beforeWrite)
    if (err instanceof TimeoutError)
      throw new ApiError('timeout', req.operation, `no answer within ${req.timeoutMs} ms`, undefined, { cause: err });
    const cause = err as Error & { code?: string };
    if (isUnreachable(cause))
      throw new ApiError('network', req.operation, `could not reach the API (${cause.message})`, undefined, {
        cause: err,
        unreachable: true,
      });
    throw new ApiError('network', req.operation, `the connection to the API was cut (${cause.message})`, undefined, {
      cause: err,
    });
  }
  const status = res.statusCode ?? 0;
  const ok = status >= 200 && status < 300;
  let text: string;
  try {
    text = decode(raw, res.headers['content-encoding']);
  } catch (err) {
    throw new ApiError('parse', req.operation, `the body could not be decompressed (${raw.length} bytes)`, status, {
      cause: err,
    });
  }
  const bytes = raw.length;
  // Every answer of this API is a JSON envelope: an empty 200 (not a 204) is a body cut off before its
  // first byte, retried like a truncated one (the write-back checks upstream before posting again).
  if (ok && status !== 204 && text.trim() === '') {
    throw new ApiError('parse', req.operation, `HTTP ${status} with an empty body`, status);
  }
  let json: unknown;
  try {
    json = text.length ? JSON.parse(text) : undefined;
  } catch (err) {
    if (ok)
      throw new ApiError('parse', req.operation, `the body is not complete JSON (${bytes} bytes)`, status, {
        cause: err,
      });
    json = undefined;
  }
  const responseHeaders = { get: (name: string) => headerValue(res.headers[name.toLowerCase()]) };
  if (!ok) {
    const kind = kindOfStatus(status);
    throw new ApiError(kind, req.operation, describe(status, json, responseHeaders.get('location')), status, {
      retryAfterMs,
    });
  }
  return { status, json, bytes, headers: responseHeaders };
}

class TimeoutError extends Error {}

/** Requests written on each connection so far (keep-alive reuses it), for WireEvent's `seq`. */
const written = new WeakMap<Socket, number>();

/**
 * Sends the request and reads the whole body; the timeout covers both, a body cut short is an error.
 * Nothing is written until the socket is connected and `beforeWrite` allows it, so a request the limiter
 * admitted before a 429 arrived still waits out its Retry-After (the timeout does not run meanwhile).
 */
function exchange(
  req: HttpRequest,
  headers: Record<string, string | number>,
  payload: Buffer,
  hooks: WireHooks,
): Promise<{ res: IncomingMessage; raw: Buffer; retryAfterMs?: number }> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch (err) {
      return reject(err instanceof Error ? err : new Error(String(err)));
    }
    const secure = url.protocol === 'https:';
    const call = secure ? httpsRequest : httpRequest;
    const request = call(url, { method: req.method, headers, agent: agents[secure ? 'https:' : 'http:'] });
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    const arm = () => {
      timer = setTimeout(() => {
        fail(new TimeoutError(`no answer within ${req.timeoutMs} ms`)); // before destroy: its own errors come second
        request.destroy();
      }, req.timeoutMs);
    };
    let port = 0;
    let seq = 0;
    const write = (socket: Socket, checkedAt?: number) => {
      seq = (written.get(socket) ?? 0) + 1;
      written.set(socket, seq);
      port = socket.localPort ?? 0;
      hooks.observe?.({ kind: 'write', operation: req.operation, at: Date.now(), port, seq, checkedAt });
      request.end(payload);
    };
    const ready = (socket: Socket) => {
      const wait = hooks.beforeWrite?.();
      if (!wait) return write(socket);
      clearTimeout(timer);
      wait.then(
        (checkedAt) => {
          if (request.destroyed) return fail(new Error('the connection closed while the request waited to be sent'));
          arm();
          write(socket, checkedAt ?? undefined);
        },
        (err: Error) => {
          request.destroy();
          fail(err);
        },
      );
    };
    arm();
    request.once('error', fail);
    request.once('socket', (socket: Socket) => {
      // A new connection is written once it is up (for https, once TLS is); a kept-alive one at once.
      if (request.reusedSocket || !(secure || socket.connecting)) ready(socket);
      else socket.once(secure ? 'secureConnect' : 'connect', () => ready(socket));
    });
    request.once('response', (res) => {
      let retryAfterMs: number | undefined;
      if (res.statusCode === 429) {
        retryAfterMs = retryAfterOf(res);
        hooks.observe?.({ kind: '429', operation: req.operation, at: Date.now(), port, seq, retryAfterMs });
        hooks.onThrottle?.(retryAfterMs);
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', fail);
      // 'aborted' fires (and 'end' does not) when the connection closes before the whole body.
      res.once('aborted', () =>
        fail(Object.assign(new Error('the answer was cut before its end'), { code: 'ECONNRESET' })),
      );
      res.once('end', () => {
        clearTimeout(timer);
        if (!res.complete)
          return reject(Object.assign(new Error('the answer was cut before its end'), { code: 'ECONNRESET' }));
        resolve({ res, raw: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), retryAfterMs });
      });
    });
  });
}

/** Retry-After of an answer, in ms from now (the answer's Date header guards against clock skew). */
function retryAfterOf(res: IncomingMessage): number | undefined {
  return parseRetryAfter(headerValue(res.headers['retry-after']), Date.now(), headerValue(res.headers.date));
}

function decode(raw: Buffer, encoding: string | undefined): string {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(raw).toString('utf8');
    case 'deflate':
      return inflateSync(raw).toString('utf8');
    case 'br':
      return brotliDecompressSync(raw).toString('utf8');
    default:
      return raw.toString('utf8');
  }
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
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
  return (
    Array.isArray(cause.errors) &&
    cause.errors.length > 0 &&
    cause.errors.every((e) => e.code !== undefined && UNREACHABLE.has(e.code))
  );
}

function describe(status: number, json: unknown, location: string | null): string {
  const message = typeof json === 'object' && json !== null && 'message' in json ? String(json.message) : '';
  const errors = typeof json === 'object' && json !== null && 'errors' in json ? JSON.stringify(json.errors) : '';
  const hint: Record<number, string> = {
    401: 'not authenticated: check PERKS_CLIENT_ID and PERKS_CLIENT_SECRET',
    403: 'forbidden: the credential cannot reach this group (check PERKS_GROUP_IDS)',
    404: 'not found',
    405: 'method not allowed for this path',
    429: 'throttled by the API',
  };
  // Redirects are not followed: a POST redirected would not be the same call (fetch turns it into a GET).
  const redirect =
    status >= 300 && status < 400
      ? `the API redirects${location ? ` to ${location.slice(0, 200)}` : ''}: set PERKS_BASE_URL to the address it answers at`
      : '';
  return [`HTTP ${status}`, hint[status] ?? redirect, message, errors.slice(0, 300)].filter(Boolean).join(': ');
}
