import { z } from 'zod';
import { money, timestamp } from './codecs.js';
import { pageRequest } from './envelope.js';

/** One credit item of a user. */
export const CreditItem = z.looseObject({
  status: z.string().nullish(),
  amount: money.nullish(),
  remaining_amount: money.nullish(),
  expires_at: timestamp.nullish(),
  created_at: timestamp.nullish(),
});
export type CreditItem = z.infer<typeof CreditItem>;

/** A user's credit: balances and the (paginated) items. */
export const UserCredit = z.looseObject({
  available: money.nullish(),
  spent: money.nullish(),
  expired: money.nullish(),
  credits: z.array(CreditItem).default([]),
});
export type UserCredit = z.infer<typeof UserCredit>;

export const CreditBody = z.object({ ...pageRequest, organisation_group_id: z.int().optional() });
export type CreditBody = z.infer<typeof CreditBody>;

/** The credit path is not shown in the spec: this is the default, configurable with PERKS_CREDIT_PATH. */
export const DEFAULT_CREDIT_PATH = '/v3/user/credit/{identifier}/{identifier_value}';
