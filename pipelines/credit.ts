import { defineStream } from './define.js';
import { UserCredit } from '../src/resources/credit.js';

/** User credit: one call per user (path from PERKS_CREDIT_PATH), one row per user with the items as a list. */
export default defineStream({
  name: 'credit',
  description: "Each user's credit balances and credit items",
  kind: 'per-user',
  scope: 'group',
  operation: 'userCredit',
  record: UserCredit,
  key: ['user_id'],
  columns: { user_id: 'BIGINT' },
  dependsOn: ['groups', 'users'],
  shape: 'credit',
});
