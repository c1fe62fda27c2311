/**
 * Resolves rows a crashed (or failed) run left pending: each was announced in the journal before its
 * post, so it may or may not be stored. One listing per user says which; the found ones are recorded
 * as sent, the others are returned to be posted again.
 */
import type { PerksClient } from '../api/index.js';
import type { Journal } from './journal.js';
import { entryOf, rowOf, type LedgerEntry, type WritebackRow } from './rows.js';
import { byUser, findUpstream } from './upstream.js';

export const RECOVERED_MESSAGE = 'found upstream: stored by an earlier attempt whose answer was lost';

export interface Recovery {
  /** Found upstream and now recorded as sent. */
  recovered: number;
  /** Not found upstream: to be posted again (with the body recorded when they were first announced). */
  repost: WritebackRow[];
}

export async function resolvePending(pending: LedgerEntry[], client: PerksClient, journal: Journal, runId: string): Promise<Recovery> {
  const recovery: Recovery = { recovered: 0, repost: [] };
  for (const entries of byUser(pending)) {
    const found = await findUpstream(client, {
      ...entries[0],
      ids: entries.map((e) => e.interaction_id),
      around: entries.flatMap((e) => [Date.parse(e.interaction_at), Date.parse(e.attempted_at)]),
    });
    const sent = entries.filter((e) => found.has(e.interaction_id));
    journal.append(sent.map((e) => entryOf(rowOf(e), 'sent', runId, { message: RECOVERED_MESSAGE })));
    recovery.recovered += sent.length;
    recovery.repost.push(...entries.filter((e) => !found.has(e.interaction_id)).map(rowOf));
  }
  return recovery;
}

/**
 * A post may still be on its way to the server when its process dies; the server can store it a
 * moment later. Pending rows younger than the grace period are waited for before being looked up.
 */
export async function waitForGrace(pending: LedgerEntry[], graceMs: number, now = Date.now()): Promise<number> {
  const youngest = Math.max(0, ...pending.map((e) => Date.parse(e.attempted_at)));
  const wait = Math.max(0, youngest + graceMs - now);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  return wait;
}
