/**
 * A thin node:http adapter for the handler: the request read straight from node (body size-capped), the
 * reply written with its headers lower case in name order, then content-length. A hung request gets no
 * answer until the client leaves.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '../choices.js';
import { HungRequest } from '../errors.js';
import { sortedHeaders, type SandboxRequest, type Serve } from './exchange.js';

/** Methods a fetch Request refuses: answered 405 at the HTTP level, before the handler. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** A request malformed at the HTTP level (a Host that is no host, credentials in the URL): its 4xx status. */
class MalformedRequest extends Error {
  constructor(
    readonly status: 400 | 405,
    message: string,
  ) {
    super(message);
  }
}
const decoder = new TextDecoder();

/** The body, read to its end (chunks past the cap are dropped: the handler answers 413 on the length). */
function readCapped(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('request closed before its body ended'));
    });
  });
}

function toRequest(req: IncomingMessage, body: Buffer, signal: AbortSignal): SandboxRequest {
  const method = req.method ?? 'GET';
  if (FORBIDDEN_METHODS.has(method)) throw new MalformedRequest(405, 'Method Not Allowed');
  let url: URL;
  try {
    url = new URL(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`);
  } catch {
    throw new MalformedRequest(400, 'Bad Request');
  }
  if (url.username || url.password) throw new MalformedRequest(400, 'Bad Request');
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return {
    method,
    url,
    // content-length is not passed on: the body read here is what counts.
    header: (name) => {
      const value = name === 'content-length' ? undefined : req.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    text: () => Promise.resolve(hasBody ? decoder.decode(body) : ''),
    signal,
  };
}

async function bridge(serve: Serve, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const body = await readCapped(req);
  let reply;
  try {
    reply = await serve(toRequest(req, body, controller.signal));
  } catch (err) {
    if (err instanceof MalformedRequest) {
      const text = JSON.stringify({ message: err.message });
      res
        .writeHead(
          err.status,
          [
            ['cache-control', 'no-cache, private'],
            ['content-type', 'application/json'],
            ['content-length', String(Buffer.byteLength(text))],
          ].flat(),
        )
        .end(text);
      return;
    }
    if (err instanceof HungRequest) {
      res.destroy();
      return;
    }
    throw err;
  }
  const length = typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.length;
  const headers = sortedHeaders(reply.headers);
  headers.push(['content-length', String(length)]);
  res.writeHead(reply.status, headers.flat());
  if (reply.release) {
    // The socket has the bytes once the reply is finished, or will never need them once it is closed.
    const release = reply.release;
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      release();
    };
    res.once('finish', done).once('close', done);
  }
  res.end(reply.body);
}

export function listen(serve: Serve, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    bridge(serve, req, res).catch(() => {
      if (!res.headersSent)
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Server Error"}');
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
