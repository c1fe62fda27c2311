import { z } from 'zod';
import { int, isoDate, money, timestamp, wholeMoney } from './codecs.js';
import { pageRequest } from './envelope.js';

/** One user's bulk redemption statistics (/v3/users/redemption-stats). */
export const RedemptionStatsItem = z.looseObject({
  id: int,
  UID: z.string().nullish(),
  email: z.string().nullish(),
  all_redemptions_count: int.nullish(),
  egift_orders_count: int.nullish(),
  egift_face_value: money.nullish(),
  egift_cost: money.nullish(),
  egift_savings: money.nullish(),
});
export type RedemptionStatsItem = z.infer<typeof RedemptionStatsItem>;

export const RedemptionStatsBody = z.object({
  identifier: z.enum(['id', 'email']),
  identifier_value: z.array(z.string()).min(1).max(100),
  start_date: isoDate.optional(),
  end_date: isoDate.optional(),
  active_only: z.boolean().optional(),
  organisation_group_id: z.int().optional(),
  ...pageRequest,
});
export type RedemptionStatsBody = z.infer<typeof RedemptionStatsBody>;

/** Single user stats (/v3/user/stats/{identifier}/{identifier_value}): five integers, as the spec's response line says. */
export const UserStats = z.looseObject({
  all_redemptions_count: int.nullish(),
  egift_face_value: wholeMoney.nullish(),
  egift_cost: wholeMoney.nullish(),
  order_credit: wholeMoney.nullish(),
  egift_savings: wholeMoney.nullish(),
});
export type UserStats = z.infer<typeof UserStats>;

export const UserStatsBody = z.object({
  redemption_created_from: timestamp.optional(),
  redemption_created_to: timestamp.optional(),
  organisation_group_id: z.int().optional(),
});
export type UserStatsBody = z.infer<typeof UserStatsBody>;
