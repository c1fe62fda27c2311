/**
 * Looks for interaction ids in a user's interactions list: the only way to learn whether a post whose
 * answer never arrived was stored, since the API neither returns the stored interaction nor deduplicates.
 * Which timestamp interactions_from/to filter on is not shown in the spec, so the window spans both
 * the rows' interaction_at and the times they were posted, with a day of margin each side.
 */
import type { PerksClient } from '../api/index.js';
import { clockPinned, systemClock } from '../shared/clock.js';

const MARGIN_MS = 24 * 60 * 60 * 1000;

export interface UpstreamQuery {
  organisation_group_id: number;
  identifier: string;
  identifier_value: string;
  /** interaction_id values wanted. */
  ids: number[];
  /** Instants the window must cover (interaction_at and posting times), ms. */
  around: number[];
}

/** The wanted ids found in the user's list. Stops paging once all are found. */
export async function findUpstream(client: PerksClient, query: UpstreamQuery): Promise<Set<number>> {
  const wanted = new Set(query.ids.map(String));
  const found = new Set<number>();
  // The posting times are the program's clock's (ledger-clock.ts); pinned (a day replayed), a platform that
  // stamps posts on arrival stamps them on its own clock, the system's: the window spans both.
  const around = clockPinned() ? [...query.around, systemClock.now().getTime()] : query.around;
  const from = new Date(Math.min(...around) - MARGIN_MS).toISOString();
  const to = new Date(Math.max(...around) + MARGIN_MS).toISOString();
  const pages = client.paginate(
    'listInteractions',
    {
      path: { identifier: query.identifier, identifier_value: query.identifier_value },
      body: { interactions_from: from, interactions_to: to },
      group: query.organisation_group_id,
    },
    { perPage: 100, prefetch: 1 },
  );
  for await (const page of pages) {
    for (const record of page.records) {
      if (record.interaction_id != null && wanted.has(record.interaction_id)) found.add(Number(record.interaction_id));
    }
    if (found.size === wanted.size) break;
  }
  return found;
}

/** Groups rows by the user they belong to (one listing per user). */
export function byUser<T extends { organisation_group_id: number; identifier: string; identifier_value: string }>(
  rows: T[],
): T[][] {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const key = `${row.organisation_group_id}\u0000${row.identifier}\u0000${row.identifier_value}`;
    const list = groups.get(key) ?? [];
    list.push(row);
    groups.set(key, list);
  }
  return [...groups.values()];
}
