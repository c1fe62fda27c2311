/**
 * The request and the reply as the sandbox's handler sees them, whichever way they came: the node:http
 * server (node-adapter.ts) fills them straight from the socket, and the fetch-shaped handler tests call
 * in-process converts a Request and a Response. Serving a page then costs no Request, Response or stream.
 */
export interface SandboxRequest {
  method: string;
  url: URL;
  /** A header's value (names are lower case), or null. */
  header(name: string): string | null;
  /** The body as text (UTF-8, BOM stripped, as Request.text()). */
  text(): Promise<string>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export interface Reply {
  status: number;
  /** Header names as written; servers send them lower case, sorted by name (as a Response's Headers lists them). */
  headers: Record<string, string>;
  /** Text, or UTF-8 bytes. */
  body: string | Uint8Array<ArrayBuffer>;
  /** Called once the body's bytes are no longer needed (it gives a pooled buffer back). */
  release?: () => void;
}

export type Serve = (req: SandboxRequest) => Promise<Reply>;

/** The fetch-shaped handler: for in-process calls. */
export type Handler = (req: Request) => Promise<Response>;

export function fetchHandler(serve: Serve): Handler {
  return async (req) => {
    const reply = await serve({
      method: req.method,
      url: new URL(req.url),
      header: (name) => req.headers.get(name),
      text: () => req.text(),
      signal: req.signal,
    });
    // A copy (Buffer's slice would be a view): the reply's buffer goes back to its pool now.
    const body = typeof reply.body === 'string' ? reply.body : new Uint8Array(reply.body);
    reply.release?.();
    return new Response(body, { status: reply.status, headers: reply.headers });
  };
}

/** A reply's headers as a Response lists them: lower-case names in name order. */
export function sortedHeaders(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers)
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
