/** The response envelope and the Laravel-style pagination envelope, as functions of the payload schema. */
import { z } from 'zod';
import { int } from './codecs.js';

export function envelope<T extends z.ZodType>(data: T) {
  return z.looseObject({ status: int, timestamp: z.string(), data });
}

/** The eleven pagination fields; every one optional when decoding, since the spec leaves some listings unclear. */
export const paginationFields = {
  current_page: int.optional(),
  first_page_url: z.string().nullish(),
  last_page_url: z.string().nullish(),
  next_page_url: z.string().nullish(),
  prev_page_url: z.string().nullish(),
  from: int.nullish(),
  last_page: int.optional(),
  path: z.string().nullish(),
  per_page: int.optional(),
  to: int.nullish(),
  total: int.optional(),
};
export const Pagination = z.object(paginationFields);
export type Pagination = z.infer<typeof Pagination>;

export function paginated<T extends z.ZodType>(item: T) {
  return envelope(z.array(item)).extend(paginationFields);
}

/** Paging request fields shared by listings. */
export const pageRequest = {
  page: z.int().min(1).optional(),
  per_page: z.int().min(1).max(100).optional(),
};
