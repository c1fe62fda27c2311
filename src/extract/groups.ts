/**
 * Which groups a credential reaches, with their timezones. With PERKS_GROUP_IDS (an organisation
 * token) those groups; otherwise /v3/group answers for a group-level token, and when it asks for an
 * organisation_group_id (an organisation token) /v3/group/list gives every group.
 *
 * Group records are read leniently: a record the schema refuses does not stop the run. It is kept as a
 * reject (the groups stream quarantines and counts it); when it is a group the run needs, the fields
 * the run uses (id, timezone) are read one by one, and a timezone that cannot be read at all stops only
 * that group's windowed streams (see docs/assumptions.md, Extract).
 */
import { ApiError, RecordParseError, type PerksClient } from '../api/index.js';
import { Group } from '../resources/group.js';
import { ConfigError } from '../shared/exit-codes.js';

/** A group whose record the schema refused, read field by field. */
export interface LenientGroup {
  /** Why the record was refused (quarantined). */
  reason: string;
  /** Set when the timezone itself cannot be read: the group's windowed streams cannot run. */
  timezoneError?: string;
}

export interface ResolvedGroups {
  level: 'organisation' | 'group';
  groups: Group[];
  /** Every group id the credential reaches, when the API lists them (a `--groups` slice is part of it). */
  reachable?: number[];
  /** Group records the schema refused, requested or not: the groups stream quarantines and counts them. */
  rejects: RecordParseError[];
  /** The run's groups whose record was refused, by id. */
  lenient: Map<number, LenientGroup>;
}

export async function resolveGroups(client: PerksClient, groupIds: number[] | undefined): Promise<ResolvedGroups> {
  const lenient = new Map<number, LenientGroup>();
  if (groupIds?.length) {
    // A refused listing (4xx) falls back to one read per group; an API that is down or refuses the
    // credential stops here, instead of being asked again once per group.
    const listed = await listGroups(client).catch((err: unknown) => {
      if (err instanceof ApiError && (err.kind === 'client' || err.kind === 'validation')) return undefined;
      throw err;
    });
    const groups: Group[] = [];
    for (const id of groupIds) {
      const found =
        listed?.records.find((g) => g.id === id) ??
        readReject(
          listed?.rejects.find((r) => groupIdOf(r.record) === id),
          lenient,
        ) ??
        (await getGroup(client, id, lenient));
      groups.push(found);
    }
    return {
      level: 'organisation',
      groups,
      reachable: listed && reachableOf(listed),
      rejects: listed?.rejects ?? [],
      lenient,
    };
  }
  try {
    const group = await getGroup(client, undefined, lenient);
    return { level: 'group', groups: [group], reachable: [group.id], rejects: [], lenient };
  } catch (err) {
    if (!(err instanceof ApiError) || (err.kind !== 'validation' && err.kind !== 'client')) throw err;
    const listed = await listGroups(client);
    // Without PERKS_GROUP_IDS every group is wanted: a refused record with a readable id still runs.
    const groups = [
      ...listed.records,
      ...listed.rejects.map((r) => readReject(r, lenient)).filter((g) => g !== undefined),
    ];
    if (!groups.length)
      throw new ConfigError('the credential reaches no group: check PERKS_GROUP_IDS and the credential');
    return { level: 'organisation', groups, reachable: reachableOf(listed), rejects: listed.rejects, lenient };
  }
}

/** /v3/group/list in one call (the spec shows no pagination for it), each record decoded on its own. */
async function listGroups(client: PerksClient): Promise<{ records: Group[]; rejects: RecordParseError[] }> {
  for await (const page of client.paginate('listGroups')) return { records: page.records, rejects: page.rejects };
  return { records: [], rejects: [] };
}

/** /v3/group for one group (or the token's own); a refused record is read leniently. */
async function getGroup(
  client: PerksClient,
  id: number | undefined,
  lenient: Map<number, LenientGroup>,
): Promise<Group> {
  try {
    return await client.call('getGroup', id === undefined ? {} : { group: id });
  } catch (err) {
    const group = err instanceof RecordParseError ? readReject(err, lenient) : undefined;
    if (!group || (id !== undefined && group.id !== id)) throw err;
    return group;
  }
}

function reachableOf(listed: { records: Group[]; rejects: RecordParseError[] }): number[] {
  return [
    ...listed.records.map((g) => g.id),
    ...listed.rejects.map((r) => groupIdOf(r.record)).filter((id) => id !== undefined),
  ];
}

/** The id of a group record, when it can be read (also from a refused record). */
export function groupIdOf(record: unknown): number | undefined {
  const parsed = Group.shape.id.safeParse((record as Record<string, unknown> | undefined)?.id);
  return parsed.success ? parsed.data : undefined;
}

/** A refused record, field by field: the fields that decode are kept; undefined when even the id does not. */
function readReject(reject: RecordParseError | undefined, lenient: Map<number, LenientGroup>): Group | undefined {
  const raw = reject?.record;
  const id = groupIdOf(raw);
  if (!reject || id === undefined || typeof raw !== 'object' || raw === null) return undefined;
  const fields: Record<string, unknown> = { id };
  for (const [name, schema] of Object.entries(Group.shape)) {
    const parsed = schema.safeParse((raw as Record<string, unknown>)[name]);
    if (parsed.success && name !== 'id') fields[name] = parsed.data;
  }
  const tz = (raw as Record<string, unknown>).timezone;
  const timezoneError = Group.shape.timezone.safeParse(tz).success
    ? undefined
    : `group ${id}: its timezone cannot be read (value: ${JSON.stringify(tz)?.slice(0, 60)})`;
  lenient.set(id, { reason: reject.message, timezoneError });
  return fields as Group;
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
