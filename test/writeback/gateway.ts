/**
 * A real HTTP gateway in front of the sandbox for the answers the sandbox never gives on its own
 * (a platform whose configured interaction types refuse one, a user whose listing is refused): each
 * request goes to `answer` first; when it returns nothing, the request is forwarded unchanged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface GatewayRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

export type Answer = (req: GatewayRequest) => { status: number; body: object } | undefined;

export async function startGateway(
  target: string,
  answer: Answer,
): Promise<{ baseUrl: string; refused: () => number }> {
  let refused = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try {
        body = raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        // not JSON (e.g. a form-encoded token request): forwarded as is
      }
      const own = answer({ method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0], body });
      if (own) {
        refused += 1;
        res.writeHead(own.status, { 'content-type': 'application/json' }).end(JSON.stringify(own.body));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
      ) as Record<string, string>;
      fetch(`${target}${req.url}`, { method: req.method, headers, body: raw.length ? raw : undefined })
        .then(async (upstream) => {
          const text = Buffer.from(await upstream.arrayBuffer());
          const out: Record<string, string> = {};
          upstream.headers.forEach((v, k) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
          });
          res.writeHead(upstream.status, out).end(text);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refused: () => refused };
}
