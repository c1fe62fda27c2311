/**
 * Which users a per-user stream (credit, interactions) refreshes this run. At 120 calls a minute one
 * call per user is expensive, so users are picked by what the data shows changed, in this order:
 * - changed: status, login_count, last_login, updated_at or deleted_at differ from their last refresh,
 *   or the users snapshot recorded a change of theirs since (user-changes.ts);
 * - new: users who joined since the last snapshot (and, on a first pass, everyone);
 * - active: users with orders or redemptions new or changed in this run's windows (credit spent, refunds);
 * - backlog: users never refreshed yet who joined long ago (a budget cut them off before);
 * - overdue: users whose last refresh is older than `maxAgeDays`, oldest first.
 * The call budget caps the total, in that order; what does not fit waits for the next run.
 */
import { createHash } from 'node:crypto';

export interface CurrentUser {
  id: number;
  email: string | null;
  status: string | null;
  login_count: number | null;
  last_login: string | null;
  updated_at: string | null;
  deleted_at: string | null;
}

export interface Refreshed {
  /** When the user was last refreshed (ISO). */
  at: string;
  /** Fingerprint of the user's change signals then. */
  fp: string;
}

export type Reason = 'changed' | 'new' | 'active' | 'backlog' | 'overdue';
const ORDER: readonly Reason[] = ['changed', 'new', 'active', 'backlog', 'overdue'];

export interface Selection {
  users: { id: number; reason: Reason }[];
  counts: Record<Reason, number>;
  /** Users that should have been refreshed (any reason) but did not fit the budget. */
  deferred: number;
}

export function fingerprint(u: CurrentUser): string {
  const signals = [u.status, u.login_count, u.last_login, u.updated_at, u.deleted_at].map((v) => v ?? '').join('|');
  return createHash('sha1').update(signals).digest('base64url').slice(0, 12);
}

export function selectUsers(input: {
  users: CurrentUser[];
  refreshed: Record<string, Refreshed>;
  /** User ids with orders or redemptions in this run's windows. */
  active: Set<number>;
  /** Users already done in this pass (a resumed run). */
  done: Set<number>;
  /** The latest change the users snapshots recorded per user (ISO instant), and who joined. */
  recorded?: { changedAt: Map<number, string>; joined: Set<number> };
  budgetCalls: number;
  maxAgeDays: number;
  now: Date;
}): Selection {
  const { users, refreshed, active, done, now } = input;
  const overdueBefore = now.getTime() - input.maxAgeDays * 86_400_000;
  const buckets: Record<Reason, { id: number; at: number }[]> = {
    changed: [],
    new: [],
    active: [],
    backlog: [],
    overdue: [],
  };
  const firstPass = Object.keys(refreshed).length === 0;
  for (const u of users) {
    if (done.has(u.id)) continue;
    const last = refreshed[u.id];
    const changedAt = input.recorded?.changedAt.get(u.id);
    // A user never refreshed (a budget cut them off) still comes first when the data shows a change of theirs.
    if (!last)
      (firstPass || input.recorded?.joined.has(u.id)
        ? buckets.new
        : changedAt !== undefined
          ? buckets.changed
          : active.has(u.id)
            ? buckets.active
            : buckets.backlog
      ).push({ id: u.id, at: 0 });
    else if (last.fp !== fingerprint(u) || (changedAt !== undefined && changedAt > last.at))
      buckets.changed.push({ id: u.id, at: Date.parse(last.at) });
    else if (active.has(u.id)) buckets.active.push({ id: u.id, at: Date.parse(last.at) });
    else if (Date.parse(last.at) < overdueBefore) buckets.overdue.push({ id: u.id, at: Date.parse(last.at) });
  }
  buckets.overdue.sort((a, b) => a.at - b.at || a.id - b.id);
  const selected: Selection['users'] = [];
  const counts: Record<Reason, number> = { changed: 0, new: 0, active: 0, backlog: 0, overdue: 0 };
  let deferred = 0;
  for (const reason of ORDER) {
    for (const candidate of buckets[reason]) {
      if (selected.length >= input.budgetCalls) {
        deferred += 1;
        continue;
      }
      selected.push({ id: candidate.id, reason });
      counts[reason] += 1;
    }
  }
  return { users: selected, counts, deferred };
}
