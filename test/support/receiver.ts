/**
 * A webhook receiver for alert tests: a real HTTP server on port 0 that records every request it gets
 * (path, headers, body) and answers as told: `ok` (204), `fail` (500), `reject` (400), or `hang` (never).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  got: Received[];
  /** The JSON bodies received, parsed. */
  json(): Record<string, unknown>[];
  answer: 'ok' | 'fail' | 'reject' | 'hang';
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = 'ok'): Promise<Receiver> {
  const hung: ServerResponse[] = [];
  const receiver = {
    url: '',
    got: [] as Received[],
    answer,
    json: () => receiver.got.map((r) => JSON.parse(r.body) as Record<string, unknown>),
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      receiver.got.push({ path: req.url ?? '', headers: req.headers, body });
      if (receiver.answer === 'hang') hung.push(res);
      else res.writeHead({ ok: 204, fail: 500, reject: 400 }[receiver.answer]).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
