/**
 * Posts one alert to one webhook, bounded: each attempt may take `timeoutMs` (real time: a duration), a
 * network fault, a timeout, a 429 or a 5xx is tried again after a short backoff, at most ATTEMPTS times;
 * any other answer stops. Nothing here throws: the outcome is data, and the caller names a failure once.
 */
import { postOnce } from '../shared/post-once.js';
import type { Endpoint } from './endpoints.js';

export const ATTEMPTS = 3;
const BACKOFF_MS = 250;

export type Delivery = { ok: true; status: number; attempts: number } | { ok: false; reason: string; attempts: number };

export async function deliver(endpoint: Endpoint, body: string, timeoutMs: number): Promise<Delivery> {
  let reason = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const answer = await postOnce(endpoint.url, body, timeoutMs, { timeoutText: 'PERKS_ALERT_TIMEOUT' });
    if ('status' in answer && answer.status >= 200 && answer.status < 300)
      return { ok: true, status: answer.status, attempts: attempt };
    reason = 'status' in answer ? `HTTP ${answer.status}` : answer.error;
    const transient = !('status' in answer) || answer.status === 429 || answer.status >= 500;
    if (!transient) return { ok: false, reason, attempts: attempt };
    if (attempt < ATTEMPTS) await sleep(BACKOFF_MS * 2 ** (attempt - 1) * (1 + Math.random() / 2));
  }
  return { ok: false, reason: `${reason} after ${ATTEMPTS} attempts`, attempts: ATTEMPTS };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
