/**
 * Which of some e-mail addresses the platform holds, and under which user id, at the lowest call cost:
 * listing the group (100 users a page) when its pages are fewer than the addresses, else one look-up
 * per address (404: none). The listing's first page tells its size; a listing whose size it does not
 * tell (the spec leaves the user list's pagination unclear) is not relied on.
 */
import { ApiError, type PerksClient } from '../api/index.js';

export interface Lookup {
  /** Lower-cased e-mail to platform user id, for the addresses asked about that exist. */
  found: Map<string, number>;
  calls: number;
  via: 'list' | 'get';
}

const PER_PAGE = 100;
const CHUNK = 100;

export async function usersByEmail(
  client: PerksClient,
  group: number | undefined,
  emails: string[],
  progress: (done: number, total: number) => void = () => undefined,
): Promise<Lookup> {
  const wanted = new Set(emails.map((e) => e.toLowerCase()));
  const found = new Map<string, number>();
  let calls = 0;
  if (!wanted.size) return { found, calls, via: 'get' };
  const listing = client.paginate('listUsers', { group }, { perPage: PER_PAGE });
  let pages: number | undefined;
  for await (const page of listing) {
    calls++;
    if (page.page === 1) {
      const p = page.pagination;
      pages =
        p?.last_page ??
        (p?.total !== undefined
          ? Math.ceil(p.total / (p.per_page ?? PER_PAGE))
          : page.rawCount < PER_PAGE
            ? 1
            : undefined);
      if (pages === undefined || pages > wanted.size) break;
    }
    for (const u of page.records)
      if (u.email && wanted.has(u.email.toLowerCase())) found.set(u.email.toLowerCase(), u.id);
    progress(page.page, pages!);
  }
  if (pages !== undefined && pages <= wanted.size) return { found, calls, via: 'list' };

  const list = [...wanted];
  for (let i = 0; i < list.length; i += CHUNK) {
    await Promise.all(
      list.slice(i, i + CHUNK).map(async (email) => {
        calls++;
        try {
          found.set(
            email,
            (await client.call('getUser', { group, path: { identifier: 'email', identifier_value: email } })).id,
          );
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 404)) throw err;
        }
      }),
    );
    progress(Math.min(i + CHUNK, list.length), list.length);
  }
  return { found, calls, via: 'get' };
}
