import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { lakeColumns, LakeSchemaError, sqlType } from '../../src/lake/index.js';
import {
  Group,
  Interaction,
  OfferListItem,
  Order,
  RedemptionStatsItem,
  UserCredit,
  UserListItem,
  money,
} from '../../src/resources/index.js';

const typesOf = (schema: z.ZodObject, extra?: Record<string, string>) =>
  Object.fromEntries(lakeColumns(schema, extra).map((c) => [c.name, sqlType(c.type)]));

describe('lake column types come from the zod declarations', () => {
  test('orders: ids BIGINT, money DECIMAL(18,2), text VARCHAR, in declaration order', () => {
    expect(typesOf(Order)).toEqual({
      order_id: 'BIGINT',
      order_status: 'VARCHAR',
      first_name: 'VARCHAR',
      last_name: 'VARCHAR',
      email: 'VARCHAR',
      perk_id: 'BIGINT',
      brand: 'VARCHAR',
      offer: 'VARCHAR',
      offer_excerpt: 'VARCHAR',
      face_value: 'DECIMAL(18,2)',
      order_total_paid: 'DECIMAL(18,2)',
      order_credit: 'DECIMAL(18,2)',
      order_currency: 'VARCHAR',
      order_saving: 'DECIMAL(18,2)',
      group_revenue: 'DECIMAL(18,2)',
    });
    expect(lakeColumns(Order).map((c) => c.name)[0]).toBe('order_id');
  });

  test('users: timestamps are TIMESTAMPTZ and login_count BIGINT', () => {
    expect(typesOf(UserListItem)).toEqual({
      id: 'BIGINT',
      UID: 'VARCHAR',
      first_name: 'VARCHAR',
      last_name: 'VARCHAR',
      email: 'VARCHAR',
      status: 'VARCHAR',
      created_at: 'TIMESTAMPTZ',
      alt_uid: 'VARCHAR',
      last_login: 'TIMESTAMPTZ',
      login_count: 'BIGINT',
      updated_at: 'TIMESTAMPTZ',
      deleted_at: 'TIMESTAMPTZ',
    });
  });

  test('groups: the 0/1 sandbox flag is BOOLEAN', () => {
    expect(typesOf(Group)).toMatchObject({ id: 'BIGINT', sandbox: 'BOOLEAN', timezone: 'VARCHAR' });
  });

  test('offers: collections are a LIST of STRUCT and type is a STRUCT of its declared keys only', () => {
    const types = typesOf(OfferListItem);
    expect(types.collections).toBe('STRUCT("id" BIGINT, "name" VARCHAR)[]');
    expect(types.type).toBe(
      'STRUCT("id" BIGINT, "perk_id" BIGINT, "voucher_code" VARCHAR, "presentation" VARCHAR, "redeem_url_protocol" VARCHAR, ' +
        '"redeem_url" VARCHAR, "trackable" BOOLEAN, "redeem_from_inventory" BOOLEAN, "group_allocated_inventory" BOOLEAN)',
    );
    expect(types).toMatchObject({ start_date: 'TIMESTAMPTZ', redemption_online: 'BOOLEAN', discount: 'BIGINT' });
  });

  test('interactions: interaction_details is JSON and interaction_id VARCHAR', () => {
    expect(typesOf(Interaction)).toMatchObject({
      id: 'BIGINT',
      interaction_id: 'VARCHAR',
      interaction_details: 'JSON',
      interaction_at: 'TIMESTAMPTZ',
    });
  });

  test('credit: credits is a LIST of STRUCT and user_id an extra column at the end', () => {
    const columns = lakeColumns(UserCredit, { user_id: 'BIGINT' });
    expect(Object.fromEntries(columns.map((c) => [c.name, sqlType(c.type)]))).toEqual({
      available: 'DECIMAL(18,2)',
      spent: 'DECIMAL(18,2)',
      expired: 'DECIMAL(18,2)',
      credits:
        'STRUCT("status" VARCHAR, "amount" DECIMAL(18,2), "remaining_amount" DECIMAL(18,2), "expires_at" TIMESTAMPTZ, "created_at" TIMESTAMPTZ)[]',
      user_id: 'BIGINT',
    });
  });

  test('redemption stats: money and counts, plus window_end as an extra DATE', () => {
    expect(typesOf(RedemptionStatsItem, { window_end: 'DATE' })).toMatchObject({
      all_redemptions_count: 'BIGINT',
      egift_face_value: 'DECIMAL(18,2)',
      window_end: 'DATE',
    });
  });

  test('plain zod types map too: number DOUBLE, int BIGINT, boolean, enum, arrays of scalars, records JSON', () => {
    const schema = z.object({
      ratio: z.number().optional(),
      count: z.int(),
      flag: z.boolean().default(false),
      kind: z.enum(['a', 'b']).nullable(),
      tags: z.array(z.string()),
      meta: z.record(z.string(), z.unknown()),
      parsed: z.string().transform(Number),
      cash: money,
    });
    expect(typesOf(schema)).toEqual({
      ratio: 'DOUBLE',
      count: 'BIGINT',
      flag: 'BOOLEAN',
      kind: 'VARCHAR',
      tags: 'VARCHAR[]',
      meta: 'JSON',
      parsed: 'VARCHAR',
      cash: 'DECIMAL(18,2)',
    });
  });

  test('a field the lake cannot type is refused, naming the field', () => {
    expect(() => lakeColumns(z.object({ when: z.date() }))).toThrow(/"when" \(zod date\)/);
    expect(() => lakeColumns(z.object({ either: z.union([z.string(), z.number()]) }))).toThrow(LakeSchemaError);
  });

  test('an extra column may not repeat a declared one', () => {
    expect(() => lakeColumns(Order, { order_id: 'VARCHAR' })).toThrow(/already declared/);
  });
});
