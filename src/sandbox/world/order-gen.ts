/**
 * Generates one UTC day of orders for every group: realistic money, statuses by age, a few odd instants.
 * Creation times are whole seconds, as a SQL timestamp column holds them, so inclusive bounds are exact.
 */
import type { OrderStatus } from '../choices.js';
import { DAY_MS } from '../clock.js';
import type { Rng } from '../prng.js';
import type { GroupRecord } from './groups.js';
import type { OfferRecord } from './offers.js';
import type { NewOrder, OrderStore } from './order-store.js';
import { specialInstants } from './special-times.js';
import type { UserRecord } from './users.js';

export interface DayContext {
  groups: readonly GroupRecord[];
  /** Offers orders can be placed on (eGift vouchers), with their store index. */
  voucherOffers: readonly { offer: OfferRecord; index: number }[];
  usersOf(groupId: number): readonly UserRecord[];
  /** Orders per day across groups, on average. */
  ordersPerDay: number;
  /** The data's today (midnight UTC): statuses depend on an order's age. */
  todayStart: number;
}

export function statusForAge(rng: Rng, ageMs: number): OrderStatus {
  const r = rng.next();
  if (ageMs < 2 * DAY_MS) return r < 0.5 ? 'Pending' : r < 0.95 ? 'Complete' : 'Cancelled';
  return r < 0.88 ? 'Complete' : r < 0.94 ? 'Refunded' : 'Cancelled';
}

/** Users created before t, who could still order at t (a prefix of the group's users, in creation order). */
function pickUser(rng: Rng, users: readonly UserRecord[], t: number): UserRecord | undefined {
  let lo = 0;
  let hi = users.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (users[mid].created_at <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    const u = users[Math.floor(Math.pow(rng.next(), 0.8) * lo)];
    const leftAt = u.status === 'Active' ? Infinity : u.deleted_at ?? u.updated_at;
    if (u.created_at <= t && t < leftAt) return u;
  }
  return undefined;
}

function makeOrder(ctx: DayContext, rng: Rng, groupIndex: number, t: number): NewOrder | undefined {
  const g = ctx.groups[groupIndex];
  const user = pickUser(rng, ctx.usersOf(g.id), t);
  if (!user) return undefined;
  const { offer, index } = ctx.voucherOffers[Math.floor(Math.pow(rng.next(), 1.7) * ctx.voucherOffers.length)];
  const face = rng.pick(offer.denominations);
  const cost = Math.round((face * (100 - offer.discount)) / 100);
  const credit = rng.chance(0.12) ? Math.min(cost, rng.pick([250, 500, 1000, 1500])) : 0;
  return {
    groupIndex,
    user_id: user.id,
    offerIndex: index,
    status: statusForAge(rng, ctx.todayStart - t),
    created_at: t,
    currency: g.secondCurrency && rng.chance(0.03) ? g.secondCurrency : g.currency,
    face_value: face,
    order_total_paid: cost - credit,
    order_credit: credit,
    group_revenue: Math.round((face * offer.revenueBps) / 10_000),
  };
}

/** Appends the orders of the UTC day starting at `day` to the store, in time order. */
export function generateDay(ctx: DayContext, store: OrderStore, rng: Rng, day: number): void {
  const weekday = new Date(day).getUTCDay();
  const season = (weekday === 0 || weekday === 6 ? 1.2 : 0.92) * (new Date(day).getUTCMonth() === 11 ? 1.3 : 1);
  const draft: { t: number; g: number }[] = [];
  ctx.groups.forEach((g, gi) => {
    const mean = ctx.ordersPerDay * g.weight * season;
    const n = Math.max(0, Math.round(mean * (0.8 + 0.4 * rng.next())));
    for (let k = 0; k < n; k++) draft.push({ t: day + Math.floor(rng.next() * 86_400) * 1000, g: gi });
    for (const t of specialInstants(g.timezone, day, day + DAY_MS)) draft.push({ t, g: gi });
  });
  draft.sort((a, b) => a.t - b.t || a.g - b.g);
  for (const d of draft) {
    const order = makeOrder(ctx, rng, d.g, d.t);
    if (order) store.append(order);
  }
}
