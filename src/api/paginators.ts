/**
 * Paginators behind one small interface (guide example 4): the first page is page 1; after each
 * response the paginator says whether another page follows. Two strategies:
 * - LastPagePaginator: the response carries the Laravel envelope (last_page / next_page_url);
 *   the last page is known, so later pages may be fetched ahead.
 * - ShortPagePaginator: no envelope (the spec leaves user list and orders unclear); pages until a
 *   page is shorter than per_page.
 */
import type { Pagination } from '../resources/envelope.js';

export interface Paginator {
  /** Page number after `page`, or undefined when `page` was the last. */
  next(page: number, itemCount: number): number | undefined;
  /** The last page when the server said it, else undefined. */
  readonly lastPage?: number;
}

export class LastPagePaginator implements Paginator {
  constructor(readonly lastPage: number) {}
  next(page: number): number | undefined {
    return page < this.lastPage ? page + 1 : undefined;
  }
}

export class ShortPagePaginator implements Paginator {
  readonly lastPage = undefined;
  constructor(private readonly perPage: number) {}
  next(page: number, itemCount: number): number | undefined {
    return itemCount >= this.perPage ? page + 1 : undefined;
  }
}

/** Picks the strategy from the first response. */
export function paginatorFor(first: Pagination | undefined, requestedPerPage: number): Paginator {
  if (first?.last_page !== undefined) return new LastPagePaginator(Math.max(1, first.last_page));
  if (first?.next_page_url === null && first.current_page !== undefined)
    return new LastPagePaginator(first.current_page);
  return new ShortPagePaginator(first?.per_page ?? requestedPerPage);
}
