import { defineStream } from './define.js';
import { UserListItem } from '../src/resources/user.js';

export default defineStream({
  name: 'users',
  description: 'Every user of each group, all pages, a snapshot per run',
  kind: 'snapshot',
  scope: 'group',
  operation: 'listUsers',
  record: UserListItem,
  key: ['id'],
  dependsOn: ['groups'],
});
