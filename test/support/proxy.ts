/**
 * An HTTP proxy in front of the sandbox, for faults the sandbox does not make itself: 429s with each
 * form of Retry-After, connections reset, 4xx answers, rewritten credentials (canary secrets), headers
 * taken away. It logs every request with its arrival and answer times and how many were in flight.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireEvent } from '../../src/api/index.js';

export interface ProxyRequest {
  /** 1-based arrival number. */
  n: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  arrivedAt: number;
}

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Intercept =
  | { respond: { status: number; headers?: Record<string, string>; body?: string | Buffer } }
  | { reset: true }
  | undefined;

export interface ProxyHooks {
  /** Answer (or cut) a request instead of forwarding it. */
  intercept?(req: ProxyRequest): Intercept;
  /** Change what is forwarded (e.g. a canary secret into the real one). */
  rewriteRequest?(req: ProxyRequest): { body?: string; authorization?: string };
  /** Change the sandbox's answer before the client sees it. */
  rewriteResponse?(req: ProxyRequest, answer: ProxyAnswer): ProxyAnswer;
}

export interface LogEntry {
  n: number;
  method: string;
  path: string;
  arrivedAt: number;
  answeredAt: number;
  status: number | 'reset';
  intercepted: boolean;
  headers: Record<string, string>;
  /** Requests in flight (this one included) when it arrived. */
  inFlight: number;
  /** The client's end of the connection, and the request's number on it (the client's WireEvent port and seq). */
  port: number;
  seq: number;
}

export interface Proxy {
  url: string;
  log: LogEntry[];
  hooks: ProxyHooks;
  close(): Promise<void>;
}

export async function startProxy(target: string, hooks: ProxyHooks = {}): Promise<Proxy> {
  const log: LogEntry[] = [];
  let n = 0;
  let inFlight = 0;
  const proxy: Proxy = { url: '', log, hooks, close: () => Promise.resolve() };
  const onConnection = new WeakMap<object, number>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      // Arrival is when the request's head is read, before its body (a busy machine can take a while over that).
      const arrivedAt = Date.now();
      const seq = (onConnection.get(req.socket) ?? 0) + 1;
      onConnection.set(req.socket, seq);
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      inFlight += 1;
      const request: ProxyRequest = {
        n: ++n,
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt,
      };
      const entry: LogEntry = {
        n: request.n,
        method: request.method,
        path: request.path,
        arrivedAt: request.arrivedAt,
        answeredAt: 0,
        status: 0,
        intercepted: false,
        headers: {},
        inFlight,
        port: req.socket.remotePort ?? 0,
        seq,
      };
      log.push(entry);
      const finish = (answer: (Omit<ProxyAnswer, 'body'> & { body: string | Buffer }) | 'reset') => {
        inFlight -= 1;
        entry.answeredAt = Date.now();
        if (answer === 'reset') {
          entry.status = 'reset';
          req.socket.destroy();
          return;
        }
        entry.status = answer.status;
        entry.headers = answer.headers;
        res.writeHead(answer.status, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) });
        res.end(answer.body);
      };
      try {
        const action = proxy.hooks.intercept?.(request);
        if (action && 'reset' in action) return finish('reset');
        if (action) {
          entry.intercepted = true;
          return finish({
            status: action.respond.status,
            headers: { 'content-type': 'application/json', ...action.respond.headers },
            body: action.respond.body ?? '{"message":"injected by the test proxy"}',
          });
        }
        const change = proxy.hooks.rewriteRequest?.(request) ?? {};
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
        const authorization = change.authorization ?? req.headers.authorization;
        if (authorization) headers.authorization = authorization;
        const upstream = await fetch(`${target}${request.path}`, {
          method: request.method,
          headers,
          body: request.method === 'GET' ? undefined : (change.body ?? request.body),
        });
        let answer: ProxyAnswer = {
          status: upstream.status,
          headers: { 'content-type': upstream.headers.get('content-type') ?? 'application/json' },
          body: await upstream.text(),
        };
        for (const h of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining']) {
          const v = upstream.headers.get(h);
          if (v !== null) answer.headers[h] = v;
        }
        answer = proxy.hooks.rewriteResponse?.(request, answer) ?? answer;
        finish(answer);
      } catch {
        finish('reset');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}

/** Runs `body` with `hooks` set on `proxy` and its log cleared first, and clears the hooks afterwards. */
export async function withHooks<T>(proxy: Proxy, hooks: ProxyHooks, body: () => Promise<T>): Promise<T> {
  proxy.log.length = 0;
  Object.assign(proxy.hooks, hooks);
  try {
    return await body();
  } finally {
    for (const key of Object.keys(proxy.hooks)) delete proxy.hooks[key as keyof ProxyHooks];
  }
}

/** API calls only (the token endpoint excluded). */
export const apiCalls = (log: LogEntry[]) => log.filter((e) => !e.path.startsWith('/v3/oauth/token'));

/** Whether a Retry-After was kept: requests started after a 429 arrived and before its Retry-After ended. */
export interface RetryAfterKept {
  /** 429s carrying a Retry-After. */
  throttled: number;
  /** Written by a client after the 429 reached it (or, another worker, after the pause was recorded in Redis) and before the Retry-After it computed had passed. */
  earlyByClient: number;
  /** Reached the server after it answered a 429 and before that 429's Retry-After, written after the client knew of it. */
  earlyByServer: number;
  /** Reached the server during a Retry-After but written before the client knew of the 429: on the wire already. */
  onTheWire: number;
}

/** A client's wire event, tagged with the worker (process) that saw it when several share one limit. */
export type WorkerEvent = WireEvent & { worker?: string };

/**
 * Retry-After as a floor, measured twice: by the clients' clock (their wire events, in the order they
 * happened: a write after a 429's receipt and before `receipt + Retry-After`) and by the server's (the
 * proxy's log: an arrival after the 429 was answered and before its Retry-After ended, by the header's
 * own reckoning). A request written before its client knew of the 429 was already on its way: counted
 * apart. The worker that read the 429 knows of it on receipt; other workers sharing the limit through
 * Redis from the moment it is recorded there (a 'shared' event). Client and server requests are matched
 * by connection (port) and their order on it.
 */
export function retryAfterKept(log: LogEntry[], wire: WorkerEvent[]): RetryAfterKept {
  const result: RetryAfterKept = { throttled: 0, earlyByClient: 0, earlyByServer: 0, onTheWire: 0 };
  const order = new Map<WorkerEvent, number>();
  wire.forEach((e, i) => order.set(e, i));
  // Each 429 with its Retry-After end and when it was recorded in Redis for the other workers.
  const pauses = wire.flatMap((e, i) => {
    if (e.kind !== '429' || e.retryAfterMs === undefined) return [];
    const shared = wire.find((x, j) => j > i && x.kind === 'shared' && x.worker === e.worker);
    return [
      { event: e, until: e.at + e.retryAfterMs, recordedAt: shared?.kind === 'shared' ? shared.recordedAt : Infinity },
    ];
  });
  // The worker that read the 429 knows of it from then on; another one once its look in Redis for a pause
  // was sent after the pause was recorded there (a look already on its way may miss it: on the wire).
  const knows = (p: (typeof pauses)[number], w: WorkerEvent) =>
    w.worker === p.event.worker
      ? order.get(w)! > order.get(p.event)!
      : w.kind === 'write' && w.checkedAt !== undefined && w.checkedAt > p.recordedAt;
  // Client clock.
  for (const w of wire) {
    if (w.kind !== 'write') continue;
    if (pauses.some((p) => knows(p, w) && w.at < p.until)) result.earlyByClient += 1;
  }
  // Server clock, each arrival matched to its write (the latest write on that port and seq before it).
  const writeOf = (x: LogEntry) =>
    wire.filter((w) => w.kind === 'write' && w.port === x.port && w.seq === x.seq && w.at <= x.arrivedAt + 1).at(-1);
  for (const t of log) {
    if (t.status !== 429) continue;
    const until = retryAfterEnd(t);
    if (until === undefined) continue;
    result.throttled += 1;
    const pause = pauses.find(
      (p) =>
        p.event.kind === '429' && p.event.port === t.port && p.event.seq === t.seq && p.event.at >= t.answeredAt - 1,
    );
    for (const x of log) {
      if (x === t || x.arrivedAt < t.answeredAt || x.arrivedAt >= until) continue;
      const written = writeOf(x);
      if (written && pause && !knows(pause, written)) result.onTheWire += 1;
      else result.earlyByServer += 1;
    }
  }
  return result;
}

function retryAfterEnd(e: LogEntry): number | undefined {
  const v = e.headers['retry-after'];
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v.trim())) return e.answeredAt + Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : at;
}
