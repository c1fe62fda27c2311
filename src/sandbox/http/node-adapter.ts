/** A thin node:http adapter for the fetch-shaped handler; a hung request gets no answer until the client leaves. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '../choices.js';
import { HungRequest } from '../errors.js';
import type { Handler } from './handler.js';

async function readCapped(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

async function bridge(handler: Handler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const body = await readCapped(req);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'content-length') headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = req.method ?? 'GET';
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' || body.length === 0 ? undefined : new Uint8Array(body),
    signal: controller.signal,
  });
  let response: Response;
  try {
    response = await handler(request);
  } catch (err) {
    if (err instanceof HungRequest) {
      res.destroy();
      return;
    }
    throw err;
  }
  const payload = Buffer.from(await response.arrayBuffer());
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => (out[name] = value));
  res.writeHead(response.status, { ...out, 'content-length': String(payload.length) });
  res.end(payload);
}

export function listen(handler: Handler, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    bridge(handler, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Server Error"}');
      else res.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
