import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { harness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness({ rateLimit: 3 });
});
afterAll(() => h.sb.close());

/** One raw HTTP/1.1 exchange: the request bytes as given, the answer as sent (latin1). */
function exchange(head: string, body: Buffer = Buffer.alloc(0)): Promise<string> {
  const { port } = new URL(h.sb.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.end(
      Buffer.concat([
        Buffer.from(`${head}Host: sandbox.test\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`),
        body,
      ]),
    );
  });
}
/** Request bytes exactly as given (their own Host header). */
function rawExchange(bytes: string): Promise<string> {
  const { port } = new URL(h.sb.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.end(bytes);
  });
}
const post = (path: string, body: Buffer | string, method = 'POST') =>
  exchange(
    `${method} ${path} HTTP/1.1\r\nAuthorization: Bearer ${h.groupToken}\r\nContent-Type: application/json\r\n`,
    Buffer.from(body),
  );
const headerNames = (answer: string) =>
  answer
    .split('\r\n\r\n')[0]
    .split('\r\n')
    .slice(1)
    .map((line) => line.slice(0, line.indexOf(':')));

describe('answers on the wire', () => {
  test('carry their headers lower case in name order, then content-length, whatever the answer', async () => {
    const page = await post('/v3/orders', JSON.stringify({ per_page: 2 }));
    expect(page).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(headerNames(page)).toEqual([
      'cache-control',
      'content-type',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'content-length',
      'Date',
      'Connection',
    ]);
    const wrongMethod = await post('/v3/orders', '', 'PUT');
    expect(headerNames(wrongMethod)).toEqual([
      'allow',
      'cache-control',
      'content-type',
      'content-length',
      'Date',
      'Connection',
    ]);
    await post('/v3/orders', '{}');
    await post('/v3/orders', '{}');
    const throttled = await post('/v3/orders', '{}');
    expect(throttled).toMatch(/^HTTP\/1\.1 429 /);
    expect(headerNames(throttled)).toEqual([
      'cache-control',
      'content-type',
      'retry-after',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'content-length',
      'Date',
      'Connection',
    ]);
    const body = throttled.split('\r\n\r\n')[1];
    expect(Number(/content-length: (\d+)/.exec(throttled)![1])).toBe(Buffer.byteLength(body, 'latin1'));
  });

  test('a body read as UTF-8 without its byte order mark; a request malformed at the HTTP level answered 4xx, never 500', async () => {
    const bom = await post(
      '/v3/user/get/id/1',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"nonsense": 1}')]),
    );
    expect(bom).not.toContain('must be valid JSON');
    const trace = await post('/v3/orders', '', 'TRACE');
    expect(trace).toMatch(/^HTTP\/1\.1 405 /);
    expect(trace).toContain('{"message":"Method Not Allowed"}');
    const badHost = await rawExchange('GET /v3/group HTTP/1.1\r\nHost: bad host:x\r\nConnection: close\r\n\r\n');
    expect(badHost).toMatch(/^HTTP\/1\.1 400 /);
    expect(badHost).toContain('{"message":"Bad Request"}');
  });
});
