import { defineStream } from './define.js';
import { RedemptionStatsItem } from '../src/resources/redemption-stats.js';

/** Bulk redemption statistics per month, users batched 100 ids per call, only users with stats. */
export default defineStream({
  name: 'redemption_stats',
  description: 'Redemption statistics per user and month',
  kind: 'windowed',
  scope: 'group',
  operation: 'redemptionStats',
  record: RedemptionStatsItem,
  key: ['id'],
  dependsOn: ['groups', 'users'],
  body: { identifier: 'id', active_only: true },
  columns: { window_end: 'DATE' },
  activity: {
    userField: 'id',
    compare: ['all_redemptions_count', 'egift_orders_count', 'egift_face_value', 'egift_savings'],
  },
  window: { unit: 'month', fromParam: 'start_date', toParam: 'end_date', format: 'date', partition: 'window_start' },
  userBatch: { identifier: 'id', valuesParam: 'identifier_value', size: 100 },
});
