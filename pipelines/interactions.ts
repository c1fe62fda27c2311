import { defineStream } from './define.js';
import { Interaction } from '../src/resources/interaction.js';

/** Interactions per user, from the user's last refresh (minus the lookback) to the run's upper bound. */
export default defineStream({
  name: 'interactions',
  description: 'Interactions of each user',
  kind: 'per-user',
  scope: 'group',
  operation: 'listInteractions',
  record: Interaction,
  key: ['id'],
  dependsOn: ['groups', 'users'],
  shape: 'records',
  // Interactions are posted by integrators, not caused by orders: new and changed users, then the oldest.
  refreshActiveUsers: false,
  window: { fromParam: 'interactions_from', toParam: 'interactions_to' },
});
