/** Replies: JSON (stringified, or written: json/written-json.ts) with the API's envelope {status, timestamp, data} and Laravel's eleven pagination fields. */
import { JsonList, JsonText, type Json } from '../json/written-json.js';
import type { Page } from '../ops/index.js';
import type { Reply } from './exchange.js';

/** A JSON reply; `body` is a value to stringify, or JSON already written (envelopeJson). */
export function jsonReply(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  shape: (json: Json) => Json = (t) => t,
): Reply {
  const written = body instanceof JsonText ? body : undefined;
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache, private', ...headers },
    body: shape(written ? written.json : JSON.stringify(body)),
    release: written?.buffer ? () => written.buffer!.release() : undefined,
  };
}

/**
 * The envelope {status, timestamp, current_page?, data, ...pagination} as JSON: JSON.stringify of that object,
 * with a JsonList's bytes spliced in as written (the same bytes, without an object per record).
 */
export function envelopeJson(status: number, timestamp: string, data: unknown, page?: Page['fields']): JsonText {
  const head = { status, timestamp, ...(page ? { current_page: page.current_page } : {}) };
  if (!(data instanceof JsonList)) return new JsonText(JSON.stringify({ ...head, data, ...page }));
  const { current_page: _, ...rest } = page ?? {};
  const tail = JSON.stringify(rest);
  return data.wrap(`${JSON.stringify(head).slice(0, -1)},"data":`, tail === '{}' ? '}' : `,${tail.slice(1)}`);
}
