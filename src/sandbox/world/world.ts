/**
 * The sandbox's data: groups, offers, users, orders (with their hidden creation time), credit and
 * interactions, deterministic from the seed and today. Tests read it to compute the truth.
 */
import { parseTimestamp } from '../../resources/codecs.js';
import { Clock, DAY_MS } from '../clock.js';
import type { Scale, ScalePreset } from '../options.js';
import { SCALE_PRESETS } from '../options.js';
import { createRng } from '../prng.js';
import { creditOf, spendFrom, withChanges, type CreditItemRecord, type CreditRecord } from './credit.js';
import { UserDirectory } from './directory.js';
import { CURRENCIES, GROUPS, type GroupRecord } from './groups.js';
import { InteractionBook, type InteractionRecord } from './interactions.js';
import { generateOffers, type OfferRecord } from './offers.js';
import { generateDay, type DayContext } from './order-gen.js';
import { OrderIndex } from './order-index.js';
import { ORDER_ID_BASE, OrderStore, type OrderRecord } from './order-store.js';
import type { OrderStatus } from '../choices.js';
import { generateUsers, type UserRecord } from './users.js';

export const HISTORY_DAYS = 365;

type TimeBound = number | string;
const toMs = (t: TimeBound) => (typeof t === 'number' ? t : parseTimestamp(t));

export class World {
  readonly clock: Clock;
  readonly preset: ScalePreset;
  readonly groups: readonly GroupRecord[] = GROUPS;
  readonly offers: readonly OfferRecord[];
  readonly users: UserDirectory;
  readonly orders: OrderStore;
  readonly orderIndex: OrderIndex;
  readonly interactions: InteractionBook;
  readonly dayContext: DayContext;
  /** Credit spent per user since generation (minor units). */
  private readonly creditSpent = new Map<number, number>();
  /** Credit granted, and items cut short, per user since generation (churn.ts). */
  private readonly creditChanges = new Map<number, { grants: CreditItemRecord[]; expiresAt: Map<number, number> }>();
  /** Churns so far: each draws from its own seeded stream. */
  churns = 0;
  /** Share of orders that arrive late (the `lateOrders` option): held back at generation and as days pass. */
  lateOrderShare = 0;
  /** A late order of a day that has passed (advance.ts) → the day (its start) from which churn may show it. */
  readonly releaseOn = new Map<number, number>();

  constructor(
    readonly seed: number,
    readonly scale: Scale,
    today?: string,
  ) {
    this.clock = new Clock(today);
    this.preset = SCALE_PRESETS[scale];
    const start = this.clock.todayStart;
    this.offers = generateOffers(seed, this.preset.offers, start);
    this.users = new UserDirectory(generateUsers(seed, this.groups, this.preset.usersPerGroup, start));
    this.orders = new OrderStore(CURRENCIES, Math.ceil(this.preset.orders * 1.1));
    this.orderIndex = new OrderIndex(this.orders, this.groups.length, () => this.users.nextId());
    this.interactions = new InteractionBook(seed);
    const voucherOffers = this.offers.flatMap((offer, index) =>
      offer.perk_type_format === 'vouchers' ? [{ offer, index }] : [],
    );
    this.dayContext = {
      groups: this.groups,
      voucherOffers,
      usersOf: (id) => this.users.inGroup(id),
      usersVersion: () => this.users.version,
      ordersPerDay: this.preset.orders / HISTORY_DAYS,
      todayStart: start,
    };
    for (let day = start - HISTORY_DAYS * DAY_MS; day < start; day += DAY_MS) {
      generateDay(this.dayContext, this.orders, createRng(seed, 'orders', day), day);
    }
  }

  get today(): string {
    return this.clock.today;
  }

  now(): number {
    return this.clock.now();
  }

  group(id: number): GroupRecord | undefined {
    return this.groups.find((g) => g.id === id);
  }

  groupIndex(id: number): number {
    return this.groups.findIndex((g) => g.id === id);
  }

  offerOf(order: OrderRecord): OfferRecord {
    return this.offers[order.offerIndex];
  }

  /**
   * The truth for tests: a group's (or one user's) orders created in [from, to], both inclusive,
   * in the API's order. Bounds are ms or "YYYY-MM-DD HH:MM:SS" read as UTC.
   */
  ordersOf(groupId: number, filter: { from?: TimeBound; to?: TimeBound; userId?: number } = {}): OrderRecord[] {
    const gi = this.groupIndex(groupId);
    if (gi < 0) return [];
    const list = filter.userId === undefined ? this.orderIndex.ofGroup(gi) : this.orderIndex.ofUser(filter.userId);
    const slice = this.orderIndex.range(
      list,
      filter.from === undefined ? -Infinity : toMs(filter.from),
      filter.to === undefined ? Infinity : toMs(filter.to),
    );
    const out: OrderRecord[] = [];
    for (const i of slice) if (this.orders.group[i] === gi) out.push(this.orders.get(i));
    return out;
  }

  /**
   * For tests: an order placed by `userId` in group `groupId` at the instant `at` (ms, or an ISO timestamp with its
   * offset, e.g. "2026-09-30T23:30:00-04:00"), in the past or not: the first voucher offer at its first
   * denomination, paid in full in `currency` (the group's by default). Orders created after it move one order_id on.
   */
  placeOrder(
    groupId: number,
    at: TimeBound,
    userId: number,
    status: OrderStatus = 'Complete',
    currency?: string,
  ): OrderRecord {
    const gi = this.groupIndex(groupId);
    if (gi < 0) throw new Error(`placeOrder: no group ${groupId}`);
    const index = this.dayContext.voucherOffers[0].index;
    const offer = this.offers[index];
    const face = offer.denominations[0];
    const cost = Math.round((face * (100 - offer.discount)) / 100);
    const revenue = Math.round((face * offer.revenueBps) / 10_000);
    const t = typeof at === 'number' ? at : Date.parse(at);
    if (Number.isNaN(t)) throw new Error(`placeOrder: "${at}" is not a timestamp with its offset`);
    const paidIn = currency ?? this.groups[gi].currency;
    const i = this.orders.insert(gi, userId, index, status, t, paidIn, face, cost, 0, revenue);
    return this.orders.get(i);
  }

  /** An order by its order_id (order ids are creation order, so the id gives the index). */
  orderById(orderId: number): OrderRecord | undefined {
    const i = orderId - ORDER_ID_BASE;
    return Number.isInteger(i) && i >= 0 && i < this.orders.count && !this.orders.hidden[i]
      ? this.orders.get(i)
      : undefined;
  }

  creditOf(user: UserRecord): CreditRecord {
    const now = this.now();
    const credit = withChanges(creditOf(this.seed, user, now), this.creditChanges.get(user.id), now);
    const spent = this.creditSpent.get(user.id);
    return spent ? spendFrom(credit, spent) : credit;
  }

  private changesOf(userId: number) {
    let c = this.creditChanges.get(userId);
    if (!c) this.creditChanges.set(userId, (c = { grants: [], expiresAt: new Map() }));
    return c;
  }

  /** Credit granted to a user (churn.ts): a new Available item, valid for CREDIT_LIFETIME_DAYS. */
  grantCredit(userId: number, item: CreditItemRecord): void {
    this.changesOf(userId).grants.push(item);
  }

  /** The platform cuts an item's validity short (churn.ts): the item created at `createdAt` expires at `at`. */
  expireCreditAt(userId: number, createdAt: number, at: number): void {
    this.changesOf(userId).expiresAt.set(createdAt, at);
  }

  /** Credit an order spent after generation (churn.ts): taken from the user's available items, oldest first. */
  spendCredit(userId: number, amount: number): void {
    this.creditSpent.set(userId, (this.creditSpent.get(userId) ?? 0) + amount);
  }

  interactionsOf(user: UserRecord): InteractionRecord[] {
    return this.interactions.of(user, this.now());
  }
}
