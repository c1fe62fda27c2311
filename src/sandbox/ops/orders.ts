/**
 * Order listings. Filters: order_created_from/to ("YYYY-MM-DD HH:MM:SS", read as UTC, both bounds
 * inclusive as Laravel's whereBetween), brand_id, brand_name (exact, case-insensitive). Ordered by
 * order_id, which is creation order, so pages are stable while new orders arrive at the end.
 */
import type { OrdersBody } from '../../resources/order.js';
import { fieldError } from '../errors.js';
import { maybeBare, pagedJson, pathUser, type OpContext, type OpHandler, type OpResult } from './context.js';
import { ordersJson } from './order-json.js';

/** "YYYY-MM-DD HH:MM:SS" as UTC ms; the schema checked the form, this checks the calendar. */
export function utcSeconds(field: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Date.parse(`${value.replace(' ', 'T')}Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== value.replace(' ', 'T')) {
    throw fieldError(field, `The ${field} field must be a real date and time, YYYY-MM-DD HH:MM:SS.`);
  }
  return ms;
}

function listed(ctx: OpContext, list: Int32Array): OpResult {
  const body = ctx.body as OrdersBody;
  const { world } = ctx;
  const from = utcSeconds('order_created_from', body.order_created_from, -Infinity);
  const to = utcSeconds('order_created_to', body.order_created_to, Infinity);
  let rows: ArrayLike<number> & { slice(s: number, e: number): ArrayLike<number> } = world.orderIndex.range(
    list,
    from,
    to,
  );
  if (body.brand_id !== undefined || body.brand_name !== undefined) {
    const name = body.brand_name?.toLowerCase();
    const kept: number[] = [];
    for (const i of rows as Int32Array) {
      const offer = world.offers[world.orders.offer[i]];
      if (
        (body.brand_id === undefined || offer.brand_id === body.brand_id) &&
        (name === undefined || offer.brand.toLowerCase() === name)
      )
        kept.push(i);
    }
    rows = kept;
  }
  return maybeBare(
    ctx,
    pagedJson(ctx, rows, (page) => ordersJson(world, page)),
  );
}

export const orderHandlers = {
  listOrders: (ctx) => listed(ctx, ctx.world.orderIndex.ofGroup(ctx.world.groupIndex(ctx.group.id))),
  listUserOrders: (ctx) => listed(ctx, ctx.world.orderIndex.ofUser(pathUser(ctx).id)),
} satisfies Record<string, OpHandler>;
