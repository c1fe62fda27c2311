/**
 * Which groups a credential reaches, with their timezones. With PERKS_GROUP_IDS (an organisation
 * token) those groups; otherwise /v3/group answers for a group-level token, and when it asks for an
 * organisation_group_id (an organisation token) /v3/group/list gives every group.
 */
import { ApiError, type PerksClient } from '../api/index.js';
import type { Group } from '../resources/group.js';
import { ConfigError } from '../shared/exit-codes.js';

export interface ResolvedGroups {
  level: 'organisation' | 'group';
  groups: Group[];
  /** Every group id the credential reaches, when the API lists them (a `--groups` slice is part of it). */
  reachable?: number[];
}

export async function resolveGroups(client: PerksClient, groupIds: number[] | undefined): Promise<ResolvedGroups> {
  if (groupIds?.length) {
    // A refused listing (4xx) falls back to one read per group; an API that is down or refuses the
    // credential stops here, instead of being asked again once per group.
    const listed = await client.call('listGroups').catch((err: unknown) => {
      if (err instanceof ApiError && (err.kind === 'client' || err.kind === 'validation')) return undefined;
      throw err;
    });
    const groups: Group[] = [];
    for (const id of groupIds) {
      const found = listed?.find((g) => g.id === id) ?? (await client.call('getGroup', { group: id }));
      groups.push(found);
    }
    return { level: 'organisation', groups, reachable: listed?.map((g) => g.id) };
  }
  try {
    const group = await client.call('getGroup');
    return { level: 'group', groups: [group], reachable: [group.id] };
  } catch (err) {
    if (!(err instanceof ApiError) || (err.kind !== 'validation' && err.kind !== 'client')) throw err;
    const groups = await client.call('listGroups');
    if (!groups.length) throw new ConfigError('the credential reaches no group: check PERKS_GROUP_IDS and the credential');
    return { level: 'organisation', groups, reachable: groups.map((g) => g.id) };
  }
}

/** The group's timezone, or UTC with a warning when the API gives none or an unknown one. */
export function timezoneOf(group: Group, warn: (message: string) => void): string {
  const tz = group.timezone ?? '';
  try {
    if (tz) {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return tz;
    }
  } catch {
    // fall through
  }
  warn(`group ${group.id} has no valid timezone (${JSON.stringify(group.timezone)}): its days are taken in UTC`);
  return 'UTC';
}
