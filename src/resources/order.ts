import { z } from 'zod';
import { int, money, sqlDateTime } from './codecs.js';
import { pageRequest } from './envelope.js';

/** An order (spec: Order). It carries no timestamp of its own. */
export const Order = z.looseObject({
  order_id: int,
  order_status: z.string().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  email: z.string().nullish(),
  perk_id: int.nullish(),
  brand: z.string().nullish(),
  offer: z.string().nullish(),
  offer_excerpt: z.string().nullish(),
  face_value: money.nullish(),
  order_total_paid: money.nullish(),
  order_credit: money.nullish(),
  order_currency: z.string().nullish(),
  order_saving: money.nullish(),
  group_revenue: money.nullish(),
});
export type Order = z.infer<typeof Order>;

/**
 * One observed version of an order (the order history stream, lake `order_versions`): its key and the
 * fields whose change matters to finance (status and money). No personal data.
 */
export const OrderVersion = Order.pick({
  order_id: true,
  order_status: true,
  order_currency: true,
  face_value: true,
  order_total_paid: true,
  order_credit: true,
  order_saving: true,
  group_revenue: true,
});
export type OrderVersion = z.infer<typeof OrderVersion>;

/** Body of /v3/orders and /v3/orders/{identifier}/{identifier_value}. */
export const OrdersBody = z.object({
  ...pageRequest,
  order_created_from: sqlDateTime.optional(),
  order_created_to: sqlDateTime.optional(),
  brand_id: z.int().optional(),
  brand_name: z.string().optional(),
  organisation_group_id: z.int().optional(),
});
export type OrdersBody = z.infer<typeof OrdersBody>;
