/**
 * Posts one alert to one webhook, bounded: each attempt may take `timeoutMs` (real time: a duration), a
 * network fault, a timeout, a 429 or a 5xx is tried again after a short backoff, at most ATTEMPTS times;
 * any other answer stops. Nothing here throws: the outcome is data, and the caller names a failure once.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Endpoint } from './endpoints.js';

export const ATTEMPTS = 3;
const BACKOFF_MS = 250;

export type Delivery = { ok: true; status: number; attempts: number } | { ok: false; reason: string; attempts: number };

export async function deliver(endpoint: Endpoint, body: string, timeoutMs: number): Promise<Delivery> {
  let reason = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const answer = await postOnce(endpoint.url, body, timeoutMs);
    if ('status' in answer && answer.status >= 200 && answer.status < 300)
      return { ok: true, status: answer.status, attempts: attempt };
    reason = 'status' in answer ? `HTTP ${answer.status}` : answer.error;
    const transient = !('status' in answer) || answer.status === 429 || answer.status >= 500;
    if (!transient) return { ok: false, reason, attempts: attempt };
    if (attempt < ATTEMPTS) await sleep(BACKOFF_MS * 2 ** (attempt - 1) * (1 + Math.random() / 2));
  }
  return { ok: false, reason: `${reason} after ${ATTEMPTS} attempts`, attempts: ATTEMPTS };
}

/** One POST on its own connection (none is kept open to hold the process), answered or given up on. */
function postOnce(url: URL, body: string, timeoutMs: number): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const bytes = Buffer.from(body, 'utf8');
    let settled = false;
    const done = (v: { status: number } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': bytes.length,
        'user-agent': 'perks-pipeline',
      },
    });
    const timer = setTimeout(() => {
      done({ error: `no answer within ${timeoutMs / 1000} s (PERKS_ALERT_TIMEOUT)` });
      req.destroy();
    }, timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      res.resume(); // the answer's body is not needed
      done({ status: res.statusCode ?? 0 });
      res.on('error', () => undefined);
    });
    // the error's code only: its message may repeat the address
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: `unreachable (${err.code ?? 'network error'})` }));
    req.end(bytes);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
