/**
 * The settled-change guard's weighing and judgement, on the orders stream's own declaration and encoder: what
 * counts as removed, changed and moved, and where the allowance (more than 20 orders AND more than 2% of the
 * recognised revenue in a currency, or every order gone) begins.
 */
import { describe, expect, test } from 'vitest';
import { streams, type WindowedStream } from '../../pipelines/index.js';
import { DEFAULTS } from '../../src/config/index.js';
import { valueEncoder } from '../../src/extract/windows/activity.js';
import { judgeMonth, settledMonth, weigherOf, weighWindow } from '../../src/extract/windows/settled-guard.js';

const orders = streams.find((s) => s.name === 'orders') as WindowedStream;
const encode = valueEncoder(orders);
const weigh = weigherOf(orders, ['Complete'])!;
const DAY = { startDay: '2026-09-01', endDay: '2026-09-02' };

interface Order {
  id: number;
  status?: string;
  currency?: string;
  revenue?: number;
  face?: number;
}
const record = (o: Order) => ({
  order_id: o.id,
  order_status: o.status ?? 'Complete',
  order_currency: o.currency ?? 'GBP',
  face_value: o.face ?? 10,
  order_total_paid: 9,
  order_credit: 0,
  order_saving: 1,
  group_revenue: o.revenue ?? 1,
});
/** `n` Complete GBP orders of 1.00 revenue each, ids from 1. */
const month = (n: number): Order[] => Array.from({ length: n }, (_, i) => ({ id: i + 1 }));
const byKey = (list: Order[]) => new Map(list.map((o) => [String(o.id), encode(record(o))]));

/** The month judged: the lake held `before`, the API lists `after` now (one window). */
function judged(before: Order[], after: Order[], accept = false) {
  return judgeMonth('2026-09', [DAY], [weighWindow(weigh, byKey(before), byKey(after))], { settled: true, accept });
}
/** `before` with the first `n` orders changed by `change`. */
const changing = (before: Order[], n: number, change: Partial<Order>) =>
  before.map((o, i) => (i < n ? { ...o, ...change } : o));

describe('the settled-change guard', () => {
  test('the allowance is the one in src/config/defaults.ts', () => {
    expect(DEFAULTS.settledGuard).toEqual({ orders: 20, revenueShare: 0.02 });
  });

  test('21 of 100 orders whose revenue was halved (10.5% moved) are held; 20 are within the allowance, whatever they move', () => {
    const before = month(100);
    const held = judged(before, changing(before, 21, { revenue: 0.5 }));
    expect(held).toMatchObject({ new: 0, changed: 21, removed: 0, outcome: 'held', windows: 1 });
    expect(held.currencies).toEqual([
      {
        currency: 'GBP',
        before: { orders: 100, recognised_revenue: '100.00' },
        after: { orders: 100, recognised_revenue: '89.50' },
        touched: 21,
        moved: '10.50',
      },
    ]);
    expect(held.breach).toBe(
      'GBP: 21 of 100 orders removed or changed, 10.50 of 100.00 recognised revenue moved (10.5%)',
    );
    expect(judged(before, changing(before, 20, { revenue: 0.5 }))).toMatchObject({ changed: 20, outcome: 'applied' });
    expect(judged(before, changing(before, 21, { revenue: 0.5 }), true)).toMatchObject({ outcome: 'accepted' });
  });

  test('refunds and cancellations are how a final month changes: 60 of 100 are counted, not weighed; 21 refunds undone are', () => {
    const before = month(100);
    const refunds = judged(before, [
      ...changing(before.slice(0, 40), 40, { status: 'Refunded' }),
      ...changing(before.slice(40), 20, { status: 'Cancelled' }),
    ]);
    expect(refunds).toMatchObject({ changed: 60, outcome: 'applied' });
    expect(refunds.currencies[0]).toMatchObject({
      touched: 0,
      moved: '0.00',
      after: { orders: 100, recognised_revenue: '40.00' },
    });
    // the lake says Refunded, the API Complete again: a status older than the lake's (a stale copy of the API)
    const refunded = changing(before, 21, { status: 'Refunded' });
    const undone = judged(refunded, before);
    expect(undone).toMatchObject({ changed: 21, outcome: 'held' });
    expect(undone.currencies[0]).toMatchObject({ touched: 21, moved: '21.00' });
    // a refund that also changes the money is weighed: the recognised revenue it takes out counts as moved
    for (const change of [{ revenue: 0 }, { face: 99 }]) {
      const weighed = judged(before, changing(before, 21, { status: 'Refunded', ...change }));
      expect(weighed).toMatchObject({ changed: 21, outcome: 'held' });
      expect(weighed.currencies[0]).toMatchObject({ touched: 21, moved: '21.00' });
    }
  });

  test('at 5,000 orders of 1.00, 100 removed move exactly 2% and pass; 101 move more and are held', () => {
    const before = month(5000);
    const exactly = judged(before, before.slice(100));
    expect(exactly).toMatchObject({ removed: 100, outcome: 'applied' });
    expect(exactly.currencies[0]).toMatchObject({
      moved: '100.00',
      after: { orders: 4900, recognised_revenue: '4900.00' },
    });
    expect(judged(before, before.slice(101))).toMatchObject({ removed: 101, outcome: 'held' });
  });

  test('many orders changed without moving recognised revenue, and new orders, are applied', () => {
    const before = month(100);
    const faces = judged(before, changing(before, 60, { face: 25 }));
    expect(faces).toMatchObject({ changed: 60, outcome: 'applied' });
    expect(faces.currencies[0]).toMatchObject({ touched: 60, moved: '0.00' });
    const late = judged(before, [...before, ...Array.from({ length: 50 }, (_, i) => ({ id: 1000 + i, revenue: 3 }))]);
    expect(late).toMatchObject({ new: 50, changed: 0, removed: 0, outcome: 'applied' });
    expect(late.currencies[0].after).toEqual({ orders: 150, recognised_revenue: '250.00' });
  });

  test('an order moved to another currency moves its revenue out of one and into the other', () => {
    const before = month(3);
    const moved = judged(before, changing(before, 1, { currency: 'EUR', revenue: 2.5 }));
    expect(moved.currencies).toEqual([
      {
        currency: 'EUR',
        before: { orders: 0, recognised_revenue: '0.00' },
        after: { orders: 1, recognised_revenue: '2.50' },
        touched: 0,
        moved: '2.50',
      },
      {
        currency: 'GBP',
        before: { orders: 3, recognised_revenue: '3.00' },
        after: { orders: 2, recognised_revenue: '2.00' },
        touched: 1,
        moved: '1.00',
      },
    ]);
  });

  test('a month the API lists empty is held whatever its size; a month that had none is not', () => {
    const emptied = judged(month(5), []);
    expect(emptied).toMatchObject({ removed: 5, outcome: 'held', breach: 'the API lists none of its 5 orders' });
    expect(judged([], [])).toMatchObject({ outcome: 'applied', currencies: [] });
  });

  test("a month is settled once the watermark is past its last day plus the state's lookback", () => {
    expect(settledMonth('2026-09', { watermark: '2026-10-08', lookbackDays: 7 }, 3)).toBe(true);
    expect(settledMonth('2026-09', { watermark: '2026-10-07', lookbackDays: 7 }, 3)).toBe(false);
    expect(settledMonth('2026-09', { watermark: '2026-10-04' }, 3)).toBe(true); // a state without its lookback: the setting's
    expect(settledMonth('2026-09', {}, 7)).toBe(false);
  });
});
