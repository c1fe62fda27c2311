/**
 * An HTTP front for s3rver that enforces what AWS S3 enforces and s3rver ignores: a PUT with
 * `If-None-Match: *` is refused (412 PreconditionFailed) when the object exists, a PUT with `If-Match:
 * <etag>` (quoted or bare) when it does not exist or has another ETag. Before Ceph RGW (`enforce` false) it
 * only counts or refuses as asked: RGW enforces both itself, and refuses the front's own HEAD (signed for a PUT). Checks and writes of one key take turns, as on S3.
 * Everything else passes through unchanged, so the store's conditional-write lease and commit run against
 * a server that behaves like S3 on exactly these two headers. `refuse` answers chosen requests with an S3
 * error instead (no permission to write, a clock the service refuses), as a real service would.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ConditionalFront {
  endpoint: string;
  /** Conditional PUTs refused so far. */
  refused: number;
  stop(): Promise<void>;
}

/** An S3 error answer: its HTTP status, `<Code>` and `<Message>`. */
export interface S3Refusal {
  status: number;
  code: string;
  message: string;
}

export async function startConditionalFront(
  upstream: string,
  refuse: (req: IncomingMessage) => S3Refusal | undefined = () => undefined,
  /** false before a server that enforces conditional writes itself (Ceph RGW): the front only counts and refuses as asked. */
  enforce = true,
): Promise<ConditionalFront> {
  const target = new URL(upstream);
  const turns = new Map<string, Promise<void>>();
  const front: ConditionalFront = { endpoint: '', refused: 0, stop: () => Promise.resolve() };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) =>
    new Promise<void>((done) => {
      const up = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', () => done());
        },
      );
      up.on('error', () => {
        res.writeHead(502).end();
        done();
      });
      up.end(body);
    });

  const head = (req: IncomingMessage) =>
    new Promise<{ status: number; etag?: string }>((done) => {
      const headers = { ...req.headers };
      for (const h of ['content-length', 'content-type', 'content-md5', 'expect', 'if-match', 'if-none-match'])
        delete headers[h];
      const up = request(
        { host: target.hostname, port: target.port, method: 'HEAD', path: req.url, headers },
        (answer) => {
          answer.resume();
          done({ status: answer.statusCode ?? 0, etag: answer.headers.etag });
        },
      );
      up.on('error', () => done({ status: 0 }));
      up.end();
    });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const refusal = refuse(req);
      if (refusal) {
        res.writeHead(refusal.status, { 'content-type': 'application/xml', date: new Date().toUTCString() });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`,
        );
        return;
      }
      const ifNoneMatch = req.headers['if-none-match'];
      const ifMatch = req.headers['if-match'];
      if (!enforce || req.method !== 'PUT' || (!ifNoneMatch && !ifMatch)) return void forward(req, res, body);
      const key = req.url?.split('?')[0] ?? '';
      const before = turns.get(key) ?? Promise.resolve();
      const mine = before.then(async () => {
        const current = await head(req);
        const exists = current.status === 200;
        // an ETag quoted (as S3 returns it) or bare (as Ceph RGW takes it) names the same version
        const bare = (etag: string | string[] | undefined) => String(etag ?? '').replace(/^"(.*)"$/, '$1');
        const refuse =
          (ifNoneMatch === '*' && exists) ||
          (ifMatch !== undefined && (!exists || bare(current.etag) !== bare(ifMatch)));
        if (refuse) {
          front.refused++;
          res.writeHead(412, { 'content-type': 'application/xml' });
          res.end(
            '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
          );
          return;
        }
        await forward(req, res, body);
      });
      turns.set(
        key,
        mine.catch(() => undefined),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  front.endpoint = `http://127.0.0.1:${port}`;
  front.stop = () => new Promise<void>((r) => server.close(() => r()));
  return front;
}
