/** `perks users orders`: one user's orders (the orders of one user operation), every page, read only. */
import type { PerksClient } from '../api/index.js';
import type { Order } from '../resources/order.js';
import { OrdersBody } from '../resources/order.js';
import { pathOf, type Address } from './address.js';
import { UsersInputError } from './errors.js';

export interface OrdersOptions {
  client: PerksClient;
  group?: number;
  address: Address;
  /** order_created_from / order_created_to, YYYY-MM-DD HH:MM:SS as the spec writes them. */
  from?: string;
  to?: string;
}

export async function userOrders(o: OrdersOptions): Promise<Order[]> {
  const body: Record<string, unknown> = {};
  if (o.from !== undefined) body.order_created_from = o.from;
  if (o.to !== undefined) body.order_created_to = o.to;
  const checked = OrdersBody.safeParse(body);
  if (!checked.success) {
    const field = String(checked.error.issues[0].path[0]);
    throw new UsersInputError(
      `${field === 'order_created_from' ? '--from' : '--to'} is invalid: expected a time YYYY-MM-DD HH:MM:SS`,
    );
  }
  const orders: Order[] = [];
  for await (const page of o.client.paginate('listUserOrders', {
    group: o.group,
    path: pathOf(o.address),
    body: checked.data,
  }))
    orders.push(...page.records);
  return orders;
}

const COLUMNS = [
  'order_id',
  'order_status',
  'brand',
  'offer',
  'face_value',
  'order_total_paid',
  'order_currency',
] as const;

export function formatOrders(orders: Order[], format: 'table' | 'json'): string {
  if (format === 'json') return `${JSON.stringify(orders)}\n`;
  if (!orders.length) return 'no orders\n';
  const rows = [
    COLUMNS.map(String),
    ...orders.map((x) => COLUMNS.map((c) => (x[c] === null || x[c] === undefined ? '' : String(x[c])))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return `${rows
    .map((r) =>
      r
        .map((v, i) => v.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n${orders.length} orders\n`;
}
