/**
 * Moves the data forward by whole days, one day at a time, each from its own seeded stream: new users,
 * that day's orders, pending orders settling, a few refunds of recent orders, users anonymised or
 * deactivated. New interactions appear by themselves as the clock moves.
 */
import { USER_STATUS } from '../choices.js';
import { DAY_MS } from '../clock.js';
import { createRng, type Rng } from '../prng.js';
import { generateDay } from './order-gen.js';
import { anonymisedFields, newPerson } from './users.js';
import type { World } from './world.js';

export interface AdvanceReport {
  newUsers: number[];
  newOrders: number;
  statusChanges: number;
  anonymised: number[];
  deactivated: number[];
}

function settle(world: World, rng: Rng, dayEnd: number, report: AdvanceReport): void {
  const store = world.orders;
  for (let i = store.lowerBound(dayEnd - 30 * DAY_MS); i < store.count; i++) {
    const status = store.statusOf(i);
    const age = dayEnd - store.createdAt[i];
    if (status === 'Pending' && age >= 2 * DAY_MS) {
      store.setStatus(i, rng.chance(0.92) ? 'Complete' : 'Cancelled');
      report.statusChanges++;
    } else if (status === 'Complete' && rng.chance(0.004)) {
      store.setStatus(i, 'Refunded');
      report.statusChanges++;
    }
  }
}

function changeUsers(world: World, rng: Rng, day: number, report: AdvanceReport): void {
  for (const g of world.groups) {
    const users = world.users.inGroup(g.id);
    const joining = (rng.chance(0.6) ? 1 : 0) + Math.round((users.length / 730) * rng.next() * 2);
    for (let k = 0; k < joining; k++) {
      const user = newPerson(rng, world.users.nextId(), g.id, day + rng.int(0, DAY_MS - 1));
      world.users.add(user);
      report.newUsers.push(user.id);
    }
    const leaving = (n: number) => {
      for (let k = 0; k < n; k++) {
        const u = users[rng.int(0, users.length - 1)];
        if (u.status === USER_STATUS.active && u.created_at < day) return u;
      }
      return undefined;
    };
    const quota = Math.max(1, Math.round(users.length / 2000));
    for (let k = 0; k < quota; k++) {
      const a = rng.chance(0.6) ? leaving(5) : undefined;
      if (a) {
        world.users.update(a, anonymisedFields(a, day + rng.int(0, DAY_MS - 1), rng.chance(0.5)));
        report.anonymised.push(a.id);
      }
      const d = rng.chance(0.3) ? leaving(5) : undefined;
      if (d) {
        const at = day + rng.int(0, DAY_MS - 1);
        world.users.update(d, { status: USER_STATUS.deactivated, deleted_at: at, updated_at: at });
        report.deactivated.push(d.id);
      }
    }
  }
}

/**
 * Late arrivals: the world's share of each group's orders of the day (from `first` on), at least one, is not
 * listed until two days on.
 */
function holdBackDay(world: World, first: number, day: number): void {
  if (world.lateOrderShare <= 0) return;
  const rng = createRng(world.seed, 'late-day', day);
  const store = world.orders;
  for (let g = 0; g < world.groups.length; g++) {
    const mine: number[] = [];
    for (let i = first; i < store.count; i++) if (store.group[i] === g) mine.push(i);
    for (let k = Math.max(1, Math.round(mine.length * world.lateOrderShare)); k > 0 && mine.length; k--) {
      const i = mine.splice(rng.int(0, mine.length - 1), 1)[0];
      store.setHidden(i, true);
      world.releaseOn.set(i, day + 2 * DAY_MS);
    }
  }
}

export function advanceWorld(world: World, days: number): AdvanceReport {
  if (!Number.isInteger(days) || days < 0)
    throw new RangeError(`advance(days): expected a whole number of days >= 0, got ${days}`);
  const report: AdvanceReport = { newUsers: [], newOrders: 0, statusChanges: 0, anonymised: [], deactivated: [] };
  for (let n = 0; n < days; n++) {
    const day = world.clock.todayStart;
    const rng = createRng(world.seed, 'advance', day);
    changeUsers(world, rng, day, report);
    world.dayContext.todayStart = day + DAY_MS;
    const before = world.orders.count;
    generateDay(world.dayContext, world.orders, createRng(world.seed, 'orders', day), day);
    report.newOrders += world.orders.count - before;
    holdBackDay(world, before, day);
    settle(world, rng, day + DAY_MS, report);
    world.clock.advance(1);
  }
  return report;
}
