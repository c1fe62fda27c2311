/** Redaction covers the forms a secret comes back in: whole, JSON-escaped, URL-encoded, base64, and cut. */
import { expect, test } from 'vitest';
import fc from 'fast-check';
import { formsOf, MIN_CUT, redact, registerSecret } from '../../src/shared/redact.js';

const SECRET = 'Canary"Secret\\9f/é+ q=&x7Zk';
registerSecret(SECRET);

const leaks = (text: string, secret = SECRET): string[] => {
  const out = redact(text);
  return formsOf(secret).filter((f) => {
    for (let i = 0; i + MIN_CUT <= f.length; i++) if (out.includes(f.slice(i, i + MIN_CUT))) return true;
    return false;
  });
};

test('a secret echoed whole, JSON-escaped (once or twice, \\u or \\/), URL-encoded (upper or lower hex, + for space) or in base64 at any alignment is redacted', () => {
  const echoes = [
    `refused: ${SECRET}`,
    JSON.stringify({ message: `refused ${SECRET}` }),
    JSON.stringify(JSON.stringify({ body: { client_secret: SECRET } })),
    JSON.stringify({ m: SECRET }).replaceAll('/', '\\/'),
    JSON.stringify({ m: SECRET }).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
    `https://login.example.com/next?secret=${encodeURIComponent(SECRET)}&x=1`,
    `https://login.example.com/next?secret=${encodeURIComponent(SECRET).toLowerCase()}`,
    `form: client_secret=${encodeURIComponent(SECRET).replaceAll('%20', '+')}`,
    ...[0, 1, 2, 5].map((k) => `Authorization: Basic ${Buffer.from(`${'i'.repeat(k)}:${SECRET}`).toString('base64')}`),
    `data=${Buffer.from(`{"client_secret":"${SECRET}"}`).toString('base64url')}`,
  ];
  for (const e of echoes) expect(leaks(e), e).toEqual([]);
});

test('any cut of a form of the secret at least 8 characters long, at either edge of an excerpt, is redacted (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...formsOf(SECRET)),
      fc.nat(),
      fc.nat(),
      fc.string({ maxLength: 30 }),
      (form, a, b, around) => {
        const start = a % Math.max(1, form.length - MIN_CUT + 1);
        const end = Math.min(form.length, start + MIN_CUT + (b % form.length));
        const cut = form.slice(start, end);
        const text = `${around}${cut}`;
        expect(redact(text)).not.toContain(cut);
        expect(redact(`${cut}… ${around}`)).not.toContain(cut);
      },
    ),
    { numRuns: 500, seed: 16 },
  );
});

test('text that shares fewer than 8 characters in a row with a secret is left alone', () => {
  expect(redact('HTTP 422: refused Canary" (7 characters of it)')).toBe(
    'HTTP 422: refused Canary" (7 characters of it)',
  );
  expect(redact('orders 2026-11-22: 120 rows')).toBe('orders 2026-11-22: 120 rows');
});

test('AWS-style credentials are redacted without being registered: key ids, named secret keys and session tokens, pre-signed URLs, SigV4 headers', () => {
  const keyId = 'AKIAIOSFODNN7EXAMPLE';
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  const token = 'IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample';
  const signature = 'a'.repeat(30) + 'f00dfeed' + 'b'.repeat(26);
  const texts = [
    `InvalidAccessKeyId: The AWS Access Key Id ${keyId} does not exist`,
    `temporary ASIAZZZZZZZZZZZZZZZZ used`,
    `aws_secret_access_key = ${secret}`,
    JSON.stringify({ SecretAccessKey: secret, SessionToken: token }),
    `AWS_SESSION_TOKEN=${token}`,
    `https://perks.s3.eu-west-1.amazonaws.com/lake/x.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${keyId}%2F20261122%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T120000Z&X-Amz-Expires=900&X-Amz-Security-Token=${encodeURIComponent(token)}&X-Amz-Signature=${signature}`,
    `https://perks.s3.amazonaws.com/x?AWSAccessKeyId=${keyId}&Expires=1&Signature=${encodeURIComponent(secret)}`,
    `Authorization: AWS4-HMAC-SHA256 Credential=${keyId}/20261122/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${signature}`,
  ];
  for (const t of texts) {
    const out = redact(t);
    for (const needle of [keyId, secret, 'IQoJb3JpZ2luX2Vj', 'f00dfeed', encodeURIComponent(secret).slice(0, 12)])
      expect(out, t).not.toContain(needle);
  }
  expect(redact('lake/orders/organisation_group_id=11/order_month=2026-10/month-2026-10.g11.parquet')).toBe(
    'lake/orders/organisation_group_id=11/order_month=2026-10/month-2026-10.g11.parquet',
  );
});
