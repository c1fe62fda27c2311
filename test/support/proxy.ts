/**
 * An HTTP proxy in front of the sandbox, for faults the sandbox does not make itself: 429s with each
 * form of Retry-After, connections reset, 4xx answers, rewritten credentials (canary secrets), headers
 * taken away. It logs every request with its arrival and answer times and how many were in flight.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      inFlight += 1;
      const request: ProxyRequest = {
        n: ++n,
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt: Date.now(),
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

/** API calls only (the token endpoint excluded). */
export const apiCalls = (log: LogEntry[]) => log.filter((e) => !e.path.startsWith('/v3/oauth/token'));

/**
 * Requests that arrived while a 429's Retry-After was still running: the client must send none.
 * The throttled request's own retry can only have been sent after the client read the 429, so it
 * counts from the answer on. Other requests may have been on their way when the 429 was answered;
 * on a loaded machine they can reach the proxy a few hundred milliseconds later, so they count
 * only after `graceMs` (a client ignoring Retry-After keeps sending through the rest of it).
 */
export function sentBeforeRetryAfter(log: LogEntry[], graceMs = 500): number {
  const calls = apiCalls(log);
  let early = 0;
  for (const e of calls) {
    if (e.status !== 429) continue;
    const until = retryAfterEnd(e);
    if (until === undefined) continue;
    early += calls.filter(
      (c) =>
        c.arrivedAt < until - 5 &&
        c.arrivedAt > e.answeredAt + (c.path === e.path && c.method === e.method ? 0 : graceMs),
    ).length;
  }
  return early;
}

function retryAfterEnd(e: LogEntry): number | undefined {
  const v = e.headers['retry-after'];
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v.trim())) return e.answeredAt + Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : at;
}
