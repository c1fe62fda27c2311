/**
 * Orders in typed-array columns (a million orders start in well under a second and take ~40 bytes each),
 * kept in creation-time order so order_id order is time order. The creation time is hidden from the API.
 */
import type { OrderStatus } from '../choices.js';
import { ORDER_STATUSES } from '../choices.js';

export const ORDER_ID_BASE = 700_001;

/** One order, as tests and handlers read it (money in minor units). */
export interface OrderRecord {
  index: number;
  order_id: number;
  groupIndex: number;
  user_id: number;
  offerIndex: number;
  status: OrderStatus;
  created_at: number;
  currency: string;
  face_value: number;
  order_total_paid: number;
  order_credit: number;
  order_saving: number;
  group_revenue: number;
}

/** One order's fields as push and insert take them (money in minor units). */
type OrderFields = [
  groupIndex: number,
  userId: number,
  offerIndex: number,
  status: OrderStatus,
  createdAt: number,
  currency: string,
  face: number,
  paid: number,
  credit: number,
  revenue: number,
];

export class OrderStore {
  count = 0;
  createdAt = new Float64Array(0);
  group = new Uint8Array(0);
  user = new Int32Array(0);
  offer = new Uint16Array(0);
  status = new Uint8Array(0);
  currency = new Uint8Array(0);
  face = new Int32Array(0);
  paid = new Int32Array(0);
  credit = new Int32Array(0);
  revenue = new Int32Array(0);
  /** 1 for an order the API does not show yet (a late arrival, see churn.ts); every view skips it. */
  hidden = new Uint8Array(0);
  /** Bumped by every append and every change of visibility, so derived views know to rebuild. */
  version = 0;

  constructor(
    private readonly currencies: readonly string[],
    capacity = 1024,
  ) {
    this.grow(capacity);
  }

  /** Appends one order (money in minor units); orders must come in creation-time order. */
  push(...order: OrderFields): number {
    if (this.count === this.createdAt.length) this.grow(this.count * 2);
    const i = this.count++;
    this.version++;
    if (i > 0 && order[4] < this.createdAt[i - 1]) throw new Error('orders must be appended in time order');
    this.set(i, order);
    return i;
  }

  /**
   * Inserts one order among the others at its creation time (after those created at the same instant), for tests
   * that need an order at a given instant in the past (a month's edge in some zone): the orders created later
   * move one index on, so their order_id grows by one. Returns its index.
   */
  insert(...order: OrderFields): number {
    const at = this.lowerBound(order[4] + 1);
    if (at === this.count) return this.push(...order);
    if (this.count === this.createdAt.length) this.grow(this.count * 2);
    for (const column of this.columns()) column.copyWithin(at + 1, at, this.count);
    this.count++;
    this.version++;
    this.set(at, order);
    this.hidden[at] = 0;
    return at;
  }

  private set(
    i: number,
    [groupIndex, userId, offerIndex, status, createdAt, currency, face, paid, credit, revenue]: OrderFields,
  ): void {
    this.createdAt[i] = createdAt;
    this.group[i] = groupIndex;
    this.user[i] = userId;
    this.offer[i] = offerIndex;
    this.status[i] = ORDER_STATUSES.indexOf(status);
    this.currency[i] = this.currencies.indexOf(currency);
    this.face[i] = face;
    this.paid[i] = paid;
    this.credit[i] = credit;
    this.revenue[i] = revenue;
  }

  private columns(): (Float64Array | Uint8Array | Int32Array | Uint16Array)[] {
    return [
      this.createdAt,
      this.group,
      this.user,
      this.offer,
      this.status,
      this.currency,
      this.face,
      this.paid,
      this.credit,
      this.revenue,
      this.hidden,
    ];
  }

  get(i: number): OrderRecord {
    return {
      index: i,
      order_id: ORDER_ID_BASE + i,
      groupIndex: this.group[i],
      user_id: this.user[i],
      offerIndex: this.offer[i],
      status: ORDER_STATUSES[this.status[i]],
      created_at: this.createdAt[i],
      currency: this.currencyOf(i),
      face_value: this.face[i],
      order_total_paid: this.paid[i],
      order_credit: this.credit[i],
      order_saving: this.face[i] - this.paid[i],
      group_revenue: this.revenue[i],
    };
  }

  currencyOf(i: number): string {
    return this.currencies[this.currency[i]];
  }

  statusOf(i: number): OrderStatus {
    return ORDER_STATUSES[this.status[i]];
  }

  setHidden(i: number, hidden: boolean): void {
    this.hidden[i] = hidden ? 1 : 0;
    this.version++;
  }

  setStatus(i: number, status: OrderStatus): void {
    this.status[i] = ORDER_STATUSES.indexOf(status);
  }

  /** First index whose creation time is >= t (binary search over the time-ordered column). */
  lowerBound(t: number, from = 0, to = this.count): number {
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.createdAt[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private grow(capacity: number): void {
    const copy = <T extends Float64Array | Uint8Array | Int32Array | Uint16Array>(
      old: T,
      make: (n: number) => T,
    ): T => {
      const next = make(capacity);
      next.set(old.subarray(0, this.count));
      return next;
    };
    this.createdAt = copy(this.createdAt, (n) => new Float64Array(n));
    this.group = copy(this.group, (n) => new Uint8Array(n));
    this.user = copy(this.user, (n) => new Int32Array(n));
    this.offer = copy(this.offer, (n) => new Uint16Array(n));
    this.status = copy(this.status, (n) => new Uint8Array(n));
    this.currency = copy(this.currency, (n) => new Uint8Array(n));
    this.face = copy(this.face, (n) => new Int32Array(n));
    this.paid = copy(this.paid, (n) => new Int32Array(n));
    this.credit = copy(this.credit, (n) => new Int32Array(n));
    this.revenue = copy(this.revenue, (n) => new Int32Array(n));
    this.hidden = copy(this.hidden, (n) => new Uint8Array(n));
  }
}
