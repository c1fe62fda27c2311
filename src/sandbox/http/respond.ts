/** Replies: JSON (stringified, or written: written-json.ts) with the API's envelope {status, timestamp, data} and Laravel's eleven pagination fields. */
import type { Pagination } from '../../resources/envelope.js';
import type { Reply } from './exchange.js';
import { JsonList, JsonText, type Json } from './written-json.js';

export const DEFAULT_PER_PAGE = 50;

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

export interface Page {
  /** Slice [start, end) of the full, ordered list. */
  start: number;
  end: number;
  fields: Required<Pagination>;
}

/** Laravel's LengthAwarePaginator over `total` items; `path` is the full URL without query. */
export function pageOf(total: number, request: { page?: number; per_page?: number }, path: string): Page {
  const perPage = request.per_page ?? DEFAULT_PER_PAGE;
  const page = request.page ?? 1;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const start = Math.min(total, (page - 1) * perPage);
  const end = Math.min(total, start + perPage);
  const url = (n: number) => `${path}?page=${n}`;
  return {
    start,
    end,
    fields: {
      current_page: page,
      first_page_url: url(1),
      from: end > start ? start + 1 : null,
      last_page: lastPage,
      last_page_url: url(lastPage),
      next_page_url: page < lastPage ? url(page + 1) : null,
      path,
      per_page: perPage,
      prev_page_url: page > 1 ? url(page - 1) : null,
      to: end > start ? end : null,
      total,
    },
  };
}
