import { describe, expect, test } from 'vitest';
import { World } from '../../src/sandbox/index.js';
import { TODAY } from './helpers.js';

const world = new World(1, 'tiny', TODAY);
const localTime = (ms: number, timeZone: string) => new Date(ms).toLocaleString('en-GB', { timeZone, hour12: false });

describe('the generated data', () => {
  test('tiny has four groups of tens of users and one to two thousand orders over the year before today', () => {
    expect(world.groups).toHaveLength(4);
    for (const g of world.groups) expect(world.users.inGroup(g.id).length).toBeGreaterThanOrEqual(8);
    expect(world.orders.count).toBeGreaterThan(1000);
    expect(world.orders.count).toBeLessThan(2000);
    const first = world.orders.createdAt[0];
    const last = world.orders.createdAt[world.orders.count - 1];
    expect(first).toBeGreaterThanOrEqual(Date.parse(`${TODAY}T00:00:00Z`) - 365 * 86_400_000);
    expect(last).toBeLessThan(Date.parse(`${TODAY}T00:00:00Z`));
  });

  test('users are in every lifecycle state, anonymised ones without personal fields', () => {
    const all = [...world.users.all()];
    expect(new Set(all.map((u) => u.status))).toEqual(new Set(['Active', 'Deactivated', 'Anonymised']));
    for (const u of all.filter((x) => x.status === 'Anonymised'))
      expect([u.email, u.first_name, u.last_name]).toEqual([null, null, null]);
    for (const u of all.filter((x) => x.status === 'Deactivated')) expect(u.deleted_at).not.toBeNull();
  });

  test('every group with local midnights has orders exactly at its local midnight, and order times are whole seconds', () => {
    for (const g of world.groups) {
      const orders = world.ordersOf(g.id);
      expect(
        orders.some((o) => localTime(o.created_at, g.timezone).endsWith('00:00:00')),
        g.timezone,
      ).toBe(true);
      expect(orders.every((o) => o.created_at % 1000 === 0)).toBe(true);
    }
  });

  test('orders are in creation-time order and order_id order at once', () => {
    for (let i = 1; i < world.orders.count; i++)
      expect(world.orders.createdAt[i]).toBeGreaterThanOrEqual(world.orders.createdAt[i - 1]);
  });

  test('an order never comes before its user was created', () => {
    for (let i = 0; i < world.orders.count; i++)
      expect(world.users.get(world.orders.user[i])!.created_at).toBeLessThanOrEqual(world.orders.createdAt[i]);
  });
});
