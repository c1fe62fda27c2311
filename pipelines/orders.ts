import { defineStream } from './define.js';
import { Order, OrderVersion } from '../src/resources/order.js';

/** Orders carry no date: each local day of the group is one window, and its orders get that order_date. */
export default defineStream({
  name: 'orders',
  description: "Orders of each group, one window per local day of the group's timezone",
  kind: 'windowed',
  scope: 'group',
  operation: 'listOrders',
  record: Order,
  key: ['order_id'],
  dependsOn: ['groups'],
  activity: {
    userField: 'email',
    // every field of the history's versions: a change of any of them is a new version (a currency or face value
    // corrected alone included)
    // credit spent on an order, or given back by a refund: the user's balance moved
    bearing: { amount: 'order_credit', status: 'order_status', statuses: ['Refunded'] },
    compare: [
      'order_status',
      'order_currency',
      'face_value',
      'order_total_paid',
      'order_credit',
      'order_saving',
      'group_revenue',
    ],
  },
  history: { stream: 'order_versions', record: OrderVersion },
  guard: { status: 'order_status', currency: 'order_currency', amount: 'group_revenue' },
  window: {
    unit: 'day',
    fromParam: 'order_created_from',
    toParam: 'order_created_to',
    format: 'datetime',
    partition: 'order_date',
  },
});
