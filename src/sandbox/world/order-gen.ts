/**
 * Generates one UTC day of orders for every group: realistic money, statuses by age, a few odd instants.
 * Creation times are whole seconds, as a SQL timestamp column holds them, so inclusive bounds are exact.
 * Hot path (a million orders at start): users are read from typed-array rosters, orders written in place.
 */
import type { OrderStatus } from '../choices.js';
import { DAY_MS } from '../clock.js';
import type { Rng } from '../prng.js';
import type { GroupRecord } from './groups.js';
import type { OfferRecord } from './offers.js';
import type { OrderStore } from './order-store.js';
import { specialInstants } from './special-times.js';
import type { UserRecord } from './users.js';

export interface DayContext {
  groups: readonly GroupRecord[];
  /** Offers orders can be placed on (eGift vouchers), with their store index. */
  voucherOffers: readonly { offer: OfferRecord; index: number }[];
  usersOf(groupId: number): readonly UserRecord[];
  /** Changes whenever a user is added or changed, so rosters are rebuilt. */
  usersVersion(): number;
  /** Orders per day across groups, on average. */
  ordersPerDay: number;
  /** The data's today (midnight UTC): statuses depend on an order's age. */
  todayStart: number;
}

/** A group's users as columns, in creation order: who could order when. */
interface Roster {
  version: number;
  ids: Int32Array;
  created: Float64Array;
  /** When the user stopped being able to order (deactivated or anonymised), else Infinity. */
  left: Float64Array;
}

const rosters = new WeakMap<DayContext, Roster[]>();

function rosterOf(ctx: DayContext, gi: number): Roster {
  const list = rosters.get(ctx) ?? [];
  rosters.set(ctx, list);
  const version = ctx.usersVersion();
  if (list[gi]?.version === version) return list[gi];
  const users = ctx.usersOf(ctx.groups[gi].id);
  const r: Roster = {
    version,
    ids: new Int32Array(users.length),
    created: new Float64Array(users.length),
    left: new Float64Array(users.length),
  };
  users.forEach((u, i) => {
    r.ids[i] = u.id;
    r.created[i] = u.created_at;
    r.left[i] = u.status === 'Active' ? Infinity : (u.deleted_at ?? u.updated_at);
  });
  return (list[gi] = r);
}

export function statusForAge(rng: Rng, ageMs: number): OrderStatus {
  const r = rng.next();
  if (ageMs < 2 * DAY_MS) return r < 0.5 ? 'Pending' : r < 0.95 ? 'Complete' : 'Cancelled';
  return r < 0.88 ? 'Complete' : r < 0.94 ? 'Refunded' : 'Cancelled';
}

/** How many of the roster's users were created at or before t. */
function createdBy(r: Roster, t: number): number {
  let lo = 0;
  let hi = r.created.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (r.created[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A user among the first `known` who could order at t, or -1. */
function pickUser(rng: Rng, r: Roster, known: number, t: number): number {
  if (known === 0) return -1;
  for (let attempt = 0; attempt < 4; attempt++) {
    const i = Math.floor(rng.next() * known);
    if (r.created[i] <= t && t < r.left[i]) return r.ids[i];
  }
  return -1;
}

const CREDIT_AMOUNTS = [250, 500, 1000, 1500];

function placeOrder(ctx: DayContext, store: OrderStore, rng: Rng, gi: number, t: number, userId: number): void {
  const g = ctx.groups[gi];
  const { offer, index } = ctx.voucherOffers[Math.floor(Math.pow(rng.next(), 1.7) * ctx.voucherOffers.length)];
  const face = rng.pick(offer.denominations);
  const cost = Math.round((face * (100 - offer.discount)) / 100);
  const credit = rng.chance(0.12) ? Math.min(cost, rng.pick(CREDIT_AMOUNTS)) : 0;
  const status = statusForAge(rng, ctx.todayStart - t);
  const currency = g.secondCurrency && rng.chance(0.03) ? g.secondCurrency : g.currency;
  store.push(
    gi,
    userId,
    index,
    status,
    t,
    currency,
    face,
    cost - credit,
    credit,
    Math.round((face * offer.revenueBps) / 10_000),
  );
}

/**
 * Appends the orders of the UTC day starting at `day` to the store, in time order. Each draft is one
 * number (second of the day * 8 + group index), so a plain typed-array sort orders them.
 */
export function generateDay(ctx: DayContext, store: OrderStore, rng: Rng, day: number): void {
  const weekday = new Date(day).getUTCDay();
  const season = (weekday === 0 || weekday === 6 ? 1.2 : 0.92) * (new Date(day).getUTCMonth() === 11 ? 1.3 : 1);
  const drafts: number[] = [];
  ctx.groups.forEach((g, gi) => {
    const mean = ctx.ordersPerDay * g.weight * season;
    const n = Math.max(0, Math.round(mean * (0.8 + 0.4 * rng.next())));
    for (let k = 0; k < n; k++) drafts.push(Math.floor(rng.next() * 86_400) * 8 + gi);
    for (const t of specialInstants(g.timezone, day, day + DAY_MS)) drafts.push(Math.floor((t - day) / 1000) * 8 + gi);
  });
  const sorted = Float64Array.from(drafts).sort();
  const groupRosters = ctx.groups.map((_, gi) => rosterOf(ctx, gi));
  const known = groupRosters.map((r) => createdBy(r, day));
  for (const key of sorted) {
    const gi = key % 8;
    const t = day + Math.floor(key / 8) * 1000;
    const r = groupRosters[gi];
    while (known[gi] < r.created.length && r.created[known[gi]] <= t) known[gi]++;
    const userId = pickUser(rng, r, known[gi], t);
    if (userId >= 0) placeOrder(ctx, store, rng, gi, t, userId);
  }
}
