/**
 * Resolves rows a crashed (or failed) run left pending: each was announced in the journal before its
 * post, so it may or may not be stored. One listing per user says which; the found ones are recorded
 * as sent, the others are returned to be posted again. A user whose listing is refused for good (a 4xx,
 * e.g. 404 for a user gone upstream) leaves its rows pending and named as unresolved: never a guess,
 * and never a reason to stop every other row. Transient failures after retries and refused
 * credentials still stop the run.
 */
import { ApiError, type PerksClient } from '../api/index.js';
import type { Journal } from './journal.js';
import { now as clockNow } from '../shared/clock.js';
import { entryOf, rowOf, type EntryStamp, type LedgerEntry, type WritebackRow } from './rows.js';
import { byUser, findUpstream } from './upstream.js';

export const RECOVERED_MESSAGE = 'found upstream: stored by an earlier attempt whose answer was lost';

/** A pending row whose storage upstream could not be learned: it stays pending. */
export interface Unresolved {
  interaction_id: number;
  kind: string;
  identifier_value: string;
  reason: string;
}

export interface Recovery {
  /** Found upstream and now recorded as sent. */
  recovered: number;
  /** Not found upstream: to be posted again (with the body recorded when they were first announced). */
  repost: WritebackRow[];
  /** Left pending: the listing that would tell was refused. */
  unresolved: Unresolved[];
}

/** Whether a failed listing leaves the row unresolved (true) or must stop the run (false). */
export function unresolvable(err: unknown): err is Error {
  return err instanceof ApiError ? err.kind === 'client' || err.kind === 'validation' : false;
}

export function unresolvedOf(row: WritebackRow, reason: string): Unresolved {
  return { interaction_id: row.interaction_id, kind: row.kind, identifier_value: row.identifier_value, reason };
}

export function listingFailed(err: Error): string {
  return `cannot tell whether it was stored: listing the user's interactions failed (${err.message})`;
}

export async function resolvePending(
  pending: LedgerEntry[],
  client: PerksClient,
  journal: Journal,
  clock: EntryStamp,
): Promise<Recovery> {
  const recovery: Recovery = { recovered: 0, repost: [], unresolved: [] };
  for (const entries of byUser(pending)) {
    let found: Set<number>;
    try {
      found = await findUpstream(client, {
        ...entries[0],
        ids: entries.map((e) => e.interaction_id),
        around: entries.flatMap((e) => [Date.parse(e.interaction_at), Date.parse(e.attempted_at)]),
      });
    } catch (err) {
      if (!unresolvable(err)) throw err;
      recovery.unresolved.push(...entries.map((e) => unresolvedOf(e, listingFailed(err))));
      continue;
    }
    const sent = entries.filter((e) => found.has(e.interaction_id));
    journal.append(sent.map((e) => entryOf(rowOf(e), 'sent', clock, { message: RECOVERED_MESSAGE })));
    recovery.recovered += sent.length;
    recovery.repost.push(...entries.filter((e) => !found.has(e.interaction_id)).map(rowOf));
  }
  return recovery;
}

/**
 * A post may still be on its way to the server when its process dies; the server can store it a
 * moment later. Pending rows younger than the grace period are waited for before being looked up.
 * Their age is read on the ledger's clock, the program's (ledger-clock.ts); a row stamped ahead of it (a
 * PERKS_NOW that restarted this process at an earlier instant, a stamp that followed a later one) cannot
 * tell its age: it waits the whole grace period, never more.
 */
export async function waitForGrace(
  pending: LedgerEntry[],
  graceMs: number,
  now = clockNow().getTime(),
): Promise<number> {
  const youngest = Math.max(0, ...pending.map((e) => Date.parse(e.attempted_at)));
  const wait = Math.min(graceMs, Math.max(0, youngest + graceMs - now));
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  return wait;
}
