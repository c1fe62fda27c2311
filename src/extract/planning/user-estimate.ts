/**
 * How many users a group has, for `--plan`: the lake's latest users snapshot when one is landed; when
 * none is (a first run), the users listing's own count from one call, its first page: `total`, or
 * `last_page` × `per_page`, or the page itself when it is the only one. Without that estimate a first
 * plan would show no per-user calls while the run makes one per user.
 */
import type { PerksClient } from '../../api/index.js';
import { currentUsers } from '../per-user/current-users.js';
import { hasParquet } from '../landing/lake-files.js';
import { streamDir } from '../../lake/index.js';

export interface UserEstimate {
  users: number;
  /** lake: the latest snapshot; listing: the listing's count; at-least: a full first page, no count given. */
  source: 'lake' | 'listing' | 'at-least';
}

const PER_PAGE = 100;

export function usersLanded(outDir: string, group: number): boolean {
  return hasParquet(streamDir(outDir, 'users', group));
}

export async function estimateUsers(client: PerksClient, outDir: string, group: number): Promise<UserEstimate> {
  if (usersLanded(outDir, group)) return { users: (await currentUsers(outDir, group)).length, source: 'lake' };
  for await (const page of client.paginate('listUsers', { group, body: {} }, { perPage: PER_PAGE, prefetch: 0 })) {
    const p = page.pagination;
    if (p?.total !== undefined) return { users: p.total, source: 'listing' };
    if (p?.last_page !== undefined) return { users: p.last_page * (p.per_page ?? PER_PAGE), source: 'listing' };
    return { users: page.rawCount, source: page.rawCount < PER_PAGE ? 'listing' : 'at-least' };
  }
  return { users: 0, source: 'listing' };
}

/** Each group's estimate, asked once per plan however many streams need it. */
export function userEstimates(client: PerksClient, outDir: string): (group: number) => Promise<UserEstimate> {
  const cache = new Map<number, Promise<UserEstimate>>();
  return (group) => {
    let e = cache.get(group);
    if (!e) cache.set(group, (e = estimateUsers(client, outDir, group)));
    return e;
  };
}
