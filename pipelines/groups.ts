import { defineStream } from './define.js';
import { Group } from '../src/resources/group.js';

/** Groups: /v3/group/list with an organisation token, /v3/group with a group token. */
export default defineStream({
  name: 'groups',
  description: 'Groups of the organisation, with their timezone, locale and sandbox flag',
  kind: 'snapshot',
  scope: 'organisation',
  operation: 'listGroups',
  record: Group,
  key: ['id'],
});
