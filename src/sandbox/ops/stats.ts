/**
 * Redemption statistics, computed from the same orders the listings show: all_redemptions_count counts
 * every order in the range; the egift figures sum the Complete ones (cost = paid, savings = order_saving).
 */
import type { RedemptionStatsBody, UserStatsBody } from '../../resources/redemption-stats.js';
import { dayStart, DAY_MS } from '../clock.js';
import { fieldError } from '../errors.js';
import { isCalendarDate } from '../options.js';
import type { UserRecord } from '../world/users.js';
import type { World } from '../world/world.js';
import { paged, pathUser, type OpHandler } from './context.js';
import { redemptionItemWire, userStatsWire, type OrderTotals } from './wire.js';

export function orderTotals(world: World, user: UserRecord, from: number, to: number): OrderTotals {
  const t: OrderTotals = { all: 0, complete: 0, face: 0, cost: 0, credit: 0, savings: 0 };
  const s = world.orders;
  for (const i of world.orderIndex.range(world.orderIndex.ofUser(user.id), from, to)) {
    t.all++;
    if (s.statusOf(i) !== 'Complete') continue;
    t.complete++;
    t.face += s.face[i];
    t.cost += s.paid[i];
    t.credit += s.credit[i];
    t.savings += s.face[i] - s.paid[i];
  }
  return t;
}

function date(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!isCalendarDate(value)) throw fieldError(field, `The ${field} field must be a real date, YYYY-MM-DD.`);
  return dayStart(value);
}

export const statsHandlers = {
  userStats: (ctx) => {
    const body = ctx.body as UserStatsBody;
    const from = body.redemption_created_from ? Date.parse(body.redemption_created_from) : -Infinity;
    const to = body.redemption_created_to ? Date.parse(body.redemption_created_to) : Infinity;
    return { data: userStatsWire(orderTotals(ctx.world, pathUser(ctx), from, to)) };
  },

  /** Users named by id or email (unknown ones are left out), in id order; dates are UTC days, both inclusive. */
  redemptionStats: (ctx) => {
    const body = ctx.body as RedemptionStatsBody;
    const from = date('start_date', body.start_date) ?? -Infinity;
    const end = date('end_date', body.end_date);
    const to = end === undefined ? Infinity : end + DAY_MS - 1;
    const users = new Map<number, UserRecord>();
    body.identifier_value.forEach((value, i) => {
      if (body.identifier === 'id' && !/^\d+$/.test(value))
        throw fieldError(
          `identifier_value.${i}`,
          `The identifier_value.${i} field must be an integer when identifier is id.`,
        );
      const user = ctx.world.users.find(ctx.group.id, body.identifier, value);
      if (user) users.set(user.id, user);
    });
    const rows = [...users.values()]
      .sort((a, b) => a.id - b.id)
      .map((user) => ({ user, totals: orderTotals(ctx.world, user, from, to) }))
      .filter((r) => !body.active_only || r.totals.all > 0);
    return paged(ctx, rows, (r) => redemptionItemWire(r.user, r.totals));
  },
} satisfies Record<string, OpHandler>;
