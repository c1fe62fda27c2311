/**
 * Changes the world without moving its day, as a real platform changes between two runs of the same
 * day: orders of recent days that arrive late, refunds of recent orders, a recent order disputed (a status the
 * platform never sent before), a recent order's revenue corrected, new users, users deactivated or anonymised,
 * credit spent; and (issue 25) credit granted with no other trace, credit items expiring (the platform cuts
 * their validity short, so an expiry happens within the day), many users logging in (nothing else), and a
 * few new orders of yesterday paid partly with credit (listed only now, as late orders are). Pending orders settle
 * as the day moves (advance.ts), so a month closed while some of its orders
 * were Pending sees that status vanish. Each call draws from its own seeded stream (the n-th churn of a seed
 * is always the same) and says exactly what it changed, so tests compare a second run with the truth.
 *
 * Late orders: with the `lateOrders` option, that share of the orders of the last LATE_DAYS days is
 * held back when the world is generated (the API does not show them); each churn releases them. As days pass
 * (advance.ts) the same share of each new day's orders is held back too, and released by the first churn two
 * days after it: a month's last day gets orders after the month is closed.
 */
import { CREDIT_STATUS, USER_STATUS } from '../choices.js';
import { CREDIT_LIFETIME_DAYS } from './credit.js';
import { DAY_MS } from '../clock.js';
import { createRng } from '../prng.js';
import { anonymisedFields, newPerson } from './users.js';
import type { World } from './world.js';

/** How far back late orders are held. */
export const LATE_DAYS = 3;

export interface ChurnReport {
  /** Orders that were held back and are now listed (order ids). */
  lateOrders: number[];
  /** Complete orders now Refunded (order ids). */
  refunded: number[];
  newUsers: number[];
  deactivated: number[];
  anonymised: number[];
  /** Users whose credit an order spent (a late order paid partly with credit). */
  creditSpent: number[];
  /** A Complete order of the last week now Disputed (order ids). */
  disputed: number[];
  /** A Complete order of the last week whose group revenue was corrected upwards by 1.00 (order ids). */
  corrected: number[];
  /** Users granted credit: a new item, and nothing else changed (no order, no login, no profile edit). */
  creditGranted: number[];
  /** Users one of whose Available items expired now (its validity cut short). */
  creditExpired: number[];
  /** Users who logged in (last_login, login_count), and nothing else. */
  loggedIn: number[];
  /** New orders of yesterday paid partly with credit (order ids); their users are in creditSpent. */
  creditPurchases: number[];
}

/** Per group and churn: credit grants, expiries and purchases with credit (few); logins (many: a share of users). */
const GRANTS = 2;
const EXPIRIES = 2;
const PURCHASES = 1;
const LOGIN_SHARE = 0.4;

/** Holds back a share of the last LATE_DAYS days' orders (generation only). */
export function holdBackLateOrders(world: World, share: number): void {
  if (share <= 0) return;
  const store = world.orders;
  const rng = createRng(world.seed, 'late-orders');
  for (let i = store.lowerBound(world.clock.todayStart - LATE_DAYS * DAY_MS); i < store.count; i++) {
    if (rng.chance(share)) store.setHidden(i, true);
  }
}

export function churnWorld(world: World): ChurnReport {
  const round = ++world.churns;
  const rng = createRng(world.seed, 'churn', round);
  const report: ChurnReport = {
    lateOrders: [],
    refunded: [],
    newUsers: [],
    deactivated: [],
    anonymised: [],
    creditSpent: [],
    disputed: [],
    corrected: [],
    creditGranted: [],
    creditExpired: [],
    loggedIn: [],
    creditPurchases: [],
  };
  const store = world.orders;
  const now = world.now();
  const recent = store.lowerBound(world.clock.todayStart - 7 * DAY_MS);
  const complete: number[] = [];
  for (let i = recent; i < store.count; i++) {
    if (store.hidden[i]) {
      if ((world.releaseOn.get(i) ?? 0) > world.clock.todayStart) continue; // a day's late order: not yet
      world.releaseOn.delete(i);
      store.setHidden(i, false);
      const order = store.get(i);
      report.lateOrders.push(order.order_id);
      if (order.order_credit > 0) {
        world.spendCredit(order.user_id, order.order_credit);
        report.creditSpent.push(order.user_id);
      }
    } else if (store.statusOf(i) === 'Complete') complete.push(i);
  }
  // About 3% of the last week's complete orders are refunded, at least one.
  for (let k = Math.max(1, Math.round(complete.length * 0.03)); k > 0 && complete.length; k--) {
    const i = complete.splice(rng.int(0, complete.length - 1), 1)[0];
    store.setStatus(i, 'Refunded');
    report.refunded.push(store.get(i).order_id);
  }
  for (const g of world.groups) {
    const users = world.users.inGroup(g.id);
    for (let k = 0; k < 2; k++) {
      const user = newPerson(rng, world.users.nextId(), g.id, now - rng.int(1, 3_600_000));
      world.users.add(user);
      report.newUsers.push(user.id);
    }
    const active = users.filter((u) => u.status === USER_STATUS.active && u.created_at < now - DAY_MS);
    const pick = () => active.splice(rng.int(0, active.length - 1), 1)[0];
    for (let k = 0; k < 2 && active.length; k++) {
      const a = pick();
      world.users.update(a, anonymisedFields(a, now, rng.chance(0.5)));
      report.anonymised.push(a.id);
    }
    if (active.length) {
      const d = pick();
      world.users.update(d, { status: USER_STATUS.deactivated, deleted_at: now, updated_at: now });
      report.deactivated.push(d.id);
    }
  }
  // Drawn after the rest, so the changes above stay what they were for a given seed and round.
  if (complete.length) {
    const i = complete.splice(rng.int(0, complete.length - 1), 1)[0];
    store.setStatus(i, 'Disputed');
    report.disputed.push(store.get(i).order_id);
  }
  if (complete.length) {
    const i = complete.splice(rng.int(0, complete.length - 1), 1)[0];
    store.revenue[i] += 100;
    report.corrected.push(store.get(i).order_id);
  }
  churnCredit(world, round, report);
  report.creditSpent = [...new Set(report.creditSpent)];
  return report;
}

/**
 * The credit part of a churn, from its own seeded stream (the changes above stay what they were): per group,
 * users untouched so far this churn are granted credit, see an item expire, log in, or buy with credit.
 */
function churnCredit(world: World, round: number, report: ChurnReport): void {
  const rng = createRng(world.seed, 'churn-credit', round);
  const now = world.now();
  const touched = new Set([...report.newUsers, ...report.anonymised, ...report.deactivated, ...report.creditSpent]);
  const store = world.orders;
  for (const g of world.groups) {
    const free = world.users
      .inGroup(g.id)
      .filter((u) => u.status === USER_STATUS.active && u.created_at < now - DAY_MS && !touched.has(u.id));
    const pick = (fits: (u: (typeof free)[number]) => boolean) => {
      const fitting = free.filter(fits);
      if (!fitting.length) return undefined;
      const u = fitting[rng.int(0, fitting.length - 1)];
      free.splice(free.indexOf(u), 1);
      return u;
    };
    const available = (u: (typeof free)[number]) =>
      world.creditOf(u).credits.filter((i) => i.status === CREDIT_STATUS.available);
    for (let k = 0; k < EXPIRIES; k++) {
      const u = pick((x) => available(x).length > 0);
      if (!u) break;
      const item = available(u)[0];
      world.expireCreditAt(u.id, item.created_at, now - 1000);
      report.creditExpired.push(u.id);
    }
    for (let k = 0; k < PURCHASES; k++) {
      const u = pick((x) => world.creditOf(x).available >= 100);
      const like = store.count - 1 - rng.int(0, Math.min(50, store.count - 1));
      if (!u || like < 0) break;
      const credit = Math.min(world.creditOf(u).available, store.paid[like] + store.credit[like], 1000);
      const cost = store.paid[like] + store.credit[like];
      // Placed yesterday afternoon (UTC; the latest order's time when later, orders are kept in time order), so
      // a run later today sees it in a past local day of most groups; whole seconds, as every order's time.
      const at = Math.max(world.clock.todayStart - 10 * 3_600_000, store.createdAt[store.count - 1]);
      const i = store.push(
        world.groupIndex(g.id),
        u.id,
        store.offer[like],
        'Complete',
        at,
        g.currency,
        store.face[like],
        cost - credit,
        credit,
        store.revenue[like],
      );
      world.spendCredit(u.id, credit);
      report.creditPurchases.push(store.get(i).order_id);
      report.creditSpent.push(u.id);
    }
    for (let k = 0; k < GRANTS; k++) {
      const u = pick(() => true);
      if (!u) break;
      const amount = rng.pick([500, 1000, 2500]);
      world.grantCredit(u.id, {
        status: CREDIT_STATUS.available,
        amount,
        remaining_amount: amount,
        expires_at: now + CREDIT_LIFETIME_DAYS * DAY_MS,
        created_at: now - 1000,
      });
      report.creditGranted.push(u.id);
    }
    for (let n = Math.round(free.length * LOGIN_SHARE); n > 0; n--) {
      const u = pick(() => true)!;
      world.users.update(u, { last_login: now - rng.int(1000, 600_000), login_count: u.login_count + 1 });
      report.loggedIn.push(u.id);
    }
  }
}
