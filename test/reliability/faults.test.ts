import { beforeAll, describe, expect, test } from 'vitest';
import { faultStorms, notRetried, sharedRetryAfter } from './scenarios/faults.js';
import { expectAtGoal, fast } from './at-goal.js';
import type { Row } from './table.js';

const FAST = [
  'errors20',
  'resets',
  'hangs',
  'cut',
  'everything',
  'retryAfterSeconds',
  'retryAfterDate',
  'retryAfterMissing',
  'retryAfterAbsurd',
  'tokenDown',
  'revoke25',
  'revoke5',
];
let rows: Map<string, Row>;

beforeAll(async () => {
  const list = await faultStorms({ ...fast(), storms: FAST, days: 3 });
  rows = new Map(FAST.map((k, i) => [k, list[i]]));
}, 400_000);

const at = (...keys: string[]) => keys.map((k) => rows.get(k)!);

describe('fault storms', () => {
  test('every stream is extracted completely through 5xx answers, resets, hangs, cut bodies and revoked tokens', () => {
    expectAtGoal(at('errors20', 'resets', 'hangs', 'cut', 'everything'));
  });

  test('a 429 is obeyed whether its Retry-After is seconds, a date or missing, and no call goes out before it ends', () => {
    expectAtGoal(at('retryAfterSeconds', 'retryAfterDate', 'retryAfterMissing'));
    for (const r of at('retryAfterSeconds', 'retryAfterDate', 'retryAfterMissing'))
      expect(r.figure).toMatch(/\d+×429, 0 sent before Retry-After by the client's clock, 0 by the server's/);
  });

  test("two workers sharing the limit through Redis: neither writes a request before a 429's Retry-After once it knows of it, by the clients' clock and the server's", async () => {
    const r = await sharedRetryAfter({ ...fast(), days: 20 });
    expectAtGoal([r]);
    expect(r.figure).toMatch(/[1-9]\d*×429, 0 sent before Retry-After by the clients' clock, 0 by the server's/);
  }, 180_000);

  test('an absurd Retry-After stops the run at once with a message naming the wait and the cap', () => {
    expectAtGoal(at('retryAfterAbsurd'));
    expect(rows.get('retryAfterAbsurd')!.figure).toMatch(/86400 s \(Retry-After\), above the 300 s cap/);
  });

  test('a token endpoint that keeps failing is asked at most once per retry, not once per retry of every call and group', () => {
    expectAtGoal(at('tokenDown'));
  });

  test('a token revoked while calls are in flight costs one token request, even when the new token is revoked again at once', () => {
    expectAtGoal(at('revoke25', 'revoke5'));
    expect(rows.get('revoke5')!.figure).toMatch(/up to [4-8] calls in flight at a 401/);
  });
});

describe('answers that are not retried', () => {
  test('a 400, 403, 404, 405, 409, 410, 413 or 422 is sent once and reported, never retried', async () => {
    expectAtGoal([await notRetried()]);
  });
});
