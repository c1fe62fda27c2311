/**
 * Which users a per-user stream (credit, interactions) refreshes this run. At 120 calls a minute one
 * call per user is expensive, so users are ranked by their signal's bearing on the stream (issue 25):
 * - credit_order: orders new or changed in this run's windows that carry credit (order_credit > 0) or
 *   were refunded (pipelines' `activity.bearing`; credit only);
 * - lifecycle: the users snapshots recorded a status change, deactivation, restore or anonymisation since
 *   the user's last refresh (user-changes.ts);
 * - new: users who joined since the last snapshot (and, on a first pass, everyone);
 * - expiring: the last read listed an Available item whose expires_at has passed since (credit only; the
 *   marts already count it expired, the refresh confirms it);
 * - changed: other user changes: login_count, last_login, updated_at (a login, a profile edit) or e-mail;
 * - active: other orders or redemptions new or changed in this run's windows (streams that refresh active
 *   users);
 * - backlog: users never refreshed yet who joined long ago (a budget cut them off before);
 * - overdue: users whose last refresh is older than `maxAgeDays`, oldest first.
 * A run asked for named users (`perks close` refreshes the credit of the month's holders: `requested`)
 * refreshes those only, in the order asked.
 * A user counts under their highest rank. The call budget serves the ranks in that order: no user of a lower
 * rank is served while one of a higher rank waits. What does not fit waits for the next run.
 */
import { createHash } from 'node:crypto';
import type { Refreshed } from '../state.js';

export interface CurrentUser {
  id: number;
  email: string | null;
  status: string | null;
  login_count: number | null;
  last_login: string | null;
  updated_at: string | null;
  deleted_at: string | null;
}

export type { Refreshed };

/** The ranks, highest bearing first. */
export const REASONS = [
  'requested',
  'credit_order',
  'lifecycle',
  'new',
  'expiring',
  'changed',
  'active',
  'backlog',
  'overdue',
] as const;
export type Reason = (typeof REASONS)[number];
/** The ranks that are a signal of a change (the others are upkeep): budgets serve them first across groups. */
export const SIGNALS: readonly Reason[] = REASONS.slice(0, REASONS.indexOf('backlog'));

export interface Selection {
  users: { id: number; reason: Reason }[];
  /** Users served per rank. */
  counts: Record<Reason, number>;
  /** Users per rank that did not fit the budget. */
  waiting: Record<Reason, number>;
  /** Users that should have been refreshed (any rank) but did not fit the budget. */
  deferred: number;
}

const zeros = (): Record<Reason, number> => Object.fromEntries(REASONS.map((r) => [r, 0])) as Record<Reason, number>;

/** "credit_order 3/0, new 2/0, changed 10/107": served/waiting per rank, ranks with none left out. */
export function rankText(counts: Record<string, number>, waiting: Record<string, number>): string {
  const parts = REASONS.filter((r) => (counts[r] ?? 0) + (waiting[r] ?? 0) > 0).map(
    (r) => `${r} ${counts[r] ?? 0}/${waiting[r] ?? 0}`,
  );
  return parts.length ? parts.join(', ') : 'none';
}

export function fingerprint(u: CurrentUser): string {
  const signals = [u.status, u.login_count, u.last_login, u.updated_at, u.deleted_at].map((v) => v ?? '').join('|');
  return createHash('sha1').update(signals).digest('base64url').slice(0, 12);
}

/** What the users snapshots recorded per user since a refresh (user-changes.ts), and who joined. */
export interface Recorded {
  /** The latest lifecycle change (status, deactivated, restored, anonymised) per user (ISO instant). */
  lifecycleAt: Map<number, string>;
  /** The latest other change (e-mail) per user (ISO instant). */
  changedAt: Map<number, string>;
  joined: Set<number>;
}

export function selectUsers(input: {
  users: CurrentUser[];
  refreshed: Record<string, Refreshed>;
  /** User ids with orders or redemptions in this run's windows (for streams that refresh active users). */
  active: Set<number>;
  /** Of those, the users whose new or changed orders bear on the stream (credit spent, refunds). */
  bearing?: Set<number>;
  /** Users whose last read listed an item expired since (credit). */
  expiring?: Set<number>;
  /** Users already done in this pass (a resumed run). */
  done: Set<number>;
  recorded?: Recorded;
  /** Refresh these users only, in this order (`requested`), instead of ranking every user. */
  requested?: readonly number[];
  budgetCalls: number;
  maxAgeDays: number;
  now: Date;
}): Selection {
  const { users, refreshed, active, done, now } = input;
  const overdueBefore = now.getTime() - input.maxAgeDays * 86_400_000;
  const buckets = Object.fromEntries(REASONS.map((r) => [r, [] as { id: number; at: number }[]])) as Record<
    Reason,
    { id: number; at: number }[]
  >;
  const firstPass = Object.keys(refreshed).length === 0;
  const since = (at: string | undefined, last: Refreshed | undefined) => at !== undefined && (!last || at > last.at);
  if (input.requested) {
    const current = new Set(users.map((u) => u.id));
    for (const id of input.requested) if (current.has(id) && !done.has(id)) buckets.requested.push({ id, at: 0 });
  }
  for (const u of input.requested ? [] : users) {
    if (done.has(u.id)) continue;
    const last = refreshed[u.id];
    const rank = (): Reason | undefined => {
      if (input.bearing?.has(u.id)) return 'credit_order';
      if (since(input.recorded?.lifecycleAt.get(u.id), last)) return 'lifecycle';
      if (!last && (firstPass || input.recorded?.joined.has(u.id))) return 'new';
      if (input.expiring?.has(u.id)) return 'expiring';
      if ((last && last.fp !== fingerprint(u)) || since(input.recorded?.changedAt.get(u.id), last)) return 'changed';
      if (active.has(u.id)) return 'active';
      if (!last) return 'backlog';
      if (Date.parse(last.at) < overdueBefore) return 'overdue';
      return undefined;
    };
    const reason = rank();
    if (reason) buckets[reason].push({ id: u.id, at: last ? Date.parse(last.at) : 0 });
  }
  buckets.overdue.sort((a, b) => a.at - b.at || a.id - b.id);
  const selected: Selection['users'] = [];
  const counts = zeros();
  const waiting = zeros();
  for (const reason of REASONS) {
    for (const candidate of buckets[reason]) {
      if (selected.length >= input.budgetCalls) {
        waiting[reason] += 1;
        continue;
      }
      selected.push({ id: candidate.id, reason });
      counts[reason] += 1;
    }
  }
  const deferred = REASONS.reduce((n, r) => n + waiting[r], 0);
  return { users: selected, counts, waiting, deferred };
}
