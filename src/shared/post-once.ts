/**
 * One JSON POST on its own connection (none is kept open to hold the process), answered or given up on after
 * `timeoutMs` (real time: a duration). Nothing here throws: an answer is its status, anything else one reason
 * that names no address (a network error's code only: its message may repeat the URL). Alerts and lineage post so.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

export type PostAnswer = { status: number } | { error: string };

export function postOnce(
  url: URL,
  body: string,
  timeoutMs: number,
  options: { headers?: Record<string, string>; timeoutText?: string } = {},
): Promise<PostAnswer> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const bytes = Buffer.from(body, 'utf8');
    let settled = false;
    const done = (v: PostAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': bytes.length,
        'user-agent': 'perks-pipeline',
        ...options.headers,
      },
    });
    const timer = setTimeout(() => {
      done({
        error: `no answer within ${timeoutMs / 1000} s${options.timeoutText ? ` (${options.timeoutText})` : ''}`,
      });
      req.destroy();
    }, timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      res.resume(); // the answer's body is not needed
      done({ status: res.statusCode ?? 0 });
      res.on('error', () => undefined);
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: `unreachable (${err.code ?? 'network error'})` }));
    req.end(bytes);
  });
}
