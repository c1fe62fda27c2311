/** Listings' pages: Laravel's LengthAwarePaginator, the eleven pagination fields of the API's envelope. */
import type { Pagination } from '../../resources/envelope.js';

export const DEFAULT_PER_PAGE = 50;

/** The paging fields of a listing's body. */
export type PagingBody = { page?: number; per_page?: number };

export interface Page {
  /** Slice [start, end) of the full, ordered list. */
  start: number;
  end: number;
  fields: Required<Pagination>;
}

/** Laravel's LengthAwarePaginator over `total` items; `path` is the full URL without query. */
export function pageOf(total: number, request: PagingBody, path: string): Page {
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
