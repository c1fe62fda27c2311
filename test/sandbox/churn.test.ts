import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { harness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness({ lateOrders: 0.5 });
});
afterAll(async () => {
  await h.sb.close();
});

const listed = async (from: string, to: string) =>
  (
    await h.org('/v3/orders', {
      organisation_group_id: h.groupId,
      order_created_from: from,
      order_created_to: to,
      per_page: 100,
    })
  ).body;

describe('churn(): the platform changes between two runs of the same day', () => {
  test('late orders appear, recent orders are refunded, disputed and corrected, users join, leave and are anonymised, credit is spent; the day stays', async () => {
    const world = h.sb.world;
    const today = world.today;
    const before = await listed('2026-11-19 00:00:00', '2026-11-21 23:59:59');
    const spentBefore = new Map([...world.users.all()].map((u) => [u.id, world.creditOf(u).spent]));
    const report = h.sb.churn();
    expect(world.today).toBe(today);
    expect(report.lateOrders.length).toBeGreaterThan(0);
    expect(report.refunded.length).toBeGreaterThan(0);
    expect(report.newUsers).toHaveLength(world.groups.length * 2);
    expect(report.anonymised.length).toBeGreaterThan(0);
    expect(report.deactivated.length).toBeGreaterThan(0);

    // The late orders of this group are listed now, and the truth the tests read agrees.
    const mine = report.lateOrders.filter((id) => world.orderById(id)!.groupIndex === world.groupIndex(h.groupId));
    const after = await listed('2026-11-19 00:00:00', '2026-11-21 23:59:59');
    const bought = report.creditPurchases.filter(
      (id) => world.orderById(id)!.groupIndex === world.groupIndex(h.groupId),
    );
    expect(after.total).toBe(before.total + mine.length + bought.length);
    expect(after.total).toBe(
      world.ordersOf(h.groupId, { from: '2026-11-19 00:00:00', to: '2026-11-21 23:59:59' }).length,
    );
    for (const id of report.refunded) expect(world.orderById(id)!.status).toBe('Refunded');
    // one recent order disputed (a status never sent before), another's revenue corrected
    expect(report.disputed).toHaveLength(1);
    expect(world.orderById(report.disputed[0])!.status).toBe('Disputed');
    expect(report.corrected).toHaveLength(1);
    expect(report.corrected[0]).not.toBe(report.disputed[0]);

    const gone = world.users.get(report.anonymised[0])!;
    expect(
      (await h.org(`/v3/user/get/id/${gone.id}`, { organisation_group_id: gone.groupId })).body.data.user,
    ).toMatchObject({ status: 'Anonymised', email: null });
    // Credit a late order spent is gone from the user's balance, and the balances still add up.
    const spender = report.creditSpent.find((id) => world.creditOf(world.users.get(id)!).spent > spentBefore.get(id)!);
    if (report.creditSpent.length) expect(spender).toBeDefined();
    for (const id of report.creditSpent) {
      const credit = world.creditOf(world.users.get(id)!);
      expect(credit.available).toBe(
        credit.credits.filter((c) => c.status === 'Available').reduce((n, c) => n + c.remaining_amount, 0),
      );
    }

    // Credit granted with no other trace, items expiring now, many login-only changes, few purchases with credit.
    const groups = world.groups.length;
    expect(report.creditGranted).toHaveLength(groups * 2);
    // (a small group may hold fewer users with an Available item)
    expect(report.creditExpired.length).toBeGreaterThan(groups);
    expect(report.creditExpired.length).toBeLessThanOrEqual(groups * 2);
    expect(report.creditPurchases.length).toBeGreaterThan(0);
    expect(report.creditPurchases.length).toBeLessThanOrEqual(groups);
    expect(report.loggedIn.length).toBeGreaterThan(report.creditPurchases.length * 3);
    for (const id of report.creditGranted) {
      const newest = world.creditOf(world.users.get(id)!).credits.at(-1)!;
      expect(newest).toMatchObject({ status: 'Available' });
      expect(newest.amount).toBe(newest.remaining_amount);
    }
    for (const id of report.creditExpired)
      expect(
        world.creditOf(world.users.get(id)!).credits.some((c) => c.status === 'Expired' && c.expires_at < world.now()),
      ).toBe(true);
    for (const id of report.creditPurchases) {
      const order = world.orderById(id)!;
      expect(order.order_credit).toBeGreaterThan(0);
      expect(report.creditSpent).toContain(order.user_id);
    }
    const touched = new Set([
      ...report.creditGranted,
      ...report.creditExpired,
      ...report.creditSpent,
      ...report.newUsers,
    ]);
    expect(report.loggedIn.filter((id) => touched.has(id))).toEqual([]);

    // A second churn is another change; nothing is held back any more.
    const again = h.sb.churn();
    expect(again.lateOrders).toEqual([]);
    expect(again.anonymised).not.toEqual(report.anonymised);
  });
});
