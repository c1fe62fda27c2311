/**
 * A user's credit items, derived lazily from (seed, user id) so millions of users cost nothing up front.
 * Status is read against the data clock; the balances are sums over the items, so they always agree.
 */
import { CREDIT_STATUS } from '../choices.js';
import { DAY_MS } from '../clock.js';
import { createRng } from '../prng.js';
import type { UserRecord } from './users.js';

export interface CreditItemRecord {
  status: string;
  /** Minor units. */
  amount: number;
  remaining_amount: number;
  expires_at: number;
  created_at: number;
}

export interface CreditRecord {
  available: number;
  spent: number;
  expired: number;
  /** Oldest first. */
  credits: CreditItemRecord[];
}

export const CREDIT_LIFETIME_DAYS = 365;

export function creditOf(seed: number, user: UserRecord, now: number): CreditRecord {
  const rng = createRng(seed, 'credit', user.id);
  const items: CreditItemRecord[] = [];
  if (rng.chance(0.6)) {
    let at = user.created_at;
    for (let k = 0; k < 12; k++) {
      at += rng.int(5, 120) * DAY_MS + rng.int(0, DAY_MS - 1);
      if (at > now) break;
      const amount = rng.pick([500, 1000, 1500, 2000, 2500, 5000]);
      const roll = rng.next();
      const remaining = roll < 0.4 ? 0 : roll < 0.7 ? Math.round(amount * rng.next() * 0.9) + 1 : amount;
      const expiresAt = at + CREDIT_LIFETIME_DAYS * DAY_MS;
      const status =
        remaining === 0 ? CREDIT_STATUS.spent : expiresAt <= now ? CREDIT_STATUS.expired : CREDIT_STATUS.available;
      items.push({ status, amount, remaining_amount: remaining, expires_at: expiresAt, created_at: at });
    }
  }
  return withBalances(items);
}

/** The balances of `items` (oldest first): sums over them, so they always agree. */
export function withBalances(items: CreditItemRecord[]): CreditRecord {
  const sum = (pick: (i: CreditItemRecord) => number) => items.reduce((s, i) => s + pick(i), 0);
  return {
    available: sum((i) => (i.status === CREDIT_STATUS.available ? i.remaining_amount : 0)),
    spent: sum((i) => i.amount - i.remaining_amount),
    expired: sum((i) => (i.status === CREDIT_STATUS.expired ? i.remaining_amount : 0)),
    credits: items,
  };
}

/** An item's status at `now`: Spent when nothing is left, Expired once past expires_at, else Available. */
export function statusAt(item: Pick<CreditItemRecord, 'remaining_amount' | 'expires_at'>, now: number): string {
  if (item.remaining_amount === 0) return CREDIT_STATUS.spent;
  return item.expires_at <= now ? CREDIT_STATUS.expired : CREDIT_STATUS.available;
}

/**
 * Changes made after generation (churn.ts): items granted, and items whose validity the platform cut short
 * (expires_at brought forward), applied to the generated credit at `now`.
 */
export function withChanges(
  credit: CreditRecord,
  changes: { grants: CreditItemRecord[]; expiresAt: Map<number, number> } | undefined,
  now: number,
): CreditRecord {
  if (!changes) return credit;
  const items = [...credit.credits, ...changes.grants.filter((g) => g.created_at <= now)].map((item) => {
    const expiresAt = Math.min(item.expires_at, changes.expiresAt.get(item.created_at) ?? Infinity);
    return { ...item, expires_at: expiresAt, status: statusAt({ ...item, expires_at: expiresAt }, now) };
  });
  return withBalances(items);
}

/** Takes `amount` (minor units) from a user's available credit items, oldest first. */
export function spendFrom(credit: CreditRecord, amount: number): CreditRecord {
  let left = amount;
  const credits = credit.credits.map((item) => {
    if (left <= 0 || item.status !== CREDIT_STATUS.available) return item;
    const take = Math.min(left, item.remaining_amount);
    left -= take;
    const remaining = item.remaining_amount - take;
    return { ...item, remaining_amount: remaining, status: remaining === 0 ? CREDIT_STATUS.spent : item.status };
  });
  const taken = amount - left;
  return { ...credit, available: credit.available - taken, spent: credit.spent + taken, credits };
}
