/** Users: generated per group over two years before today, in every lifecycle state, and looked up by id, email or UID. */
import { USER_STATUS, type UserStatus } from '../choices.js';
import { DAY_MS } from '../clock.js';
import { createRng, type Rng } from '../prng.js';
import type { GroupRecord } from './groups.js';
import { COMPANIES, FIRST_NAMES, LAST_NAMES, LOCATIONS } from './names.js';

export interface UserRecord {
  id: number;
  groupId: number;
  UID: string | null;
  alt_uid: string | null;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  email: string | null;
  phone: string | null;
  status: UserStatus;
  last_login: number | null;
  login_count: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  meta: Record<string, unknown> | null;
  billing: Record<string, string> | null;
}

const ascii = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

/** A new person, as generation or advance() creates them (id filled by the caller). */
export function newPerson(rng: Rng, id: number, groupId: number, createdAt: number): UserRecord {
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const roll = rng.next();
  const email =
    roll < 0.1
      ? `${ascii(first)}.${ascii(last)}+perks${id}@mail.example.org`
      : roll < 0.14
        ? `${first.normalize('NFD').replace(/[^A-Za-z]/g, '')}.${ascii(last)}${id}@Example.com`
        : `${ascii(first)}.${ascii(last)}${id}@example.com`;
  const uidRoll = rng.next();
  const UID = uidRoll < 0.05 ? null : uidRoll < 0.08 ? `CRM/${id}` : uidRoll < 0.1 ? `ext ${id}` : `CRM-${100000 + id}`;
  const loggedIn = rng.chance(0.8);
  return {
    id,
    groupId,
    UID,
    alt_uid: rng.chance(0.4) ? `ALT${id}` : null,
    first_name: first,
    last_name: last,
    company_name: rng.chance(0.1) ? rng.pick(COMPANIES) : null,
    email,
    phone: rng.chance(0.5) ? `+44 7700 ${String(900000 + (id % 100000)).padStart(6, '0')}` : null,
    status: USER_STATUS.active,
    last_login: loggedIn ? createdAt : null,
    login_count: loggedIn ? rng.int(1, 200) : 0,
    created_at: createdAt,
    updated_at: createdAt,
    deleted_at: null,
    meta: { sales: rng.int(0, 50_000), location: rng.pick(LOCATIONS) },
    billing: null,
  };
}

/** The change anonymise makes: personal fields cleared; the UID stays unless maintainUid is false. */
export function anonymisedFields(user: UserRecord, at: number, maintainUid: boolean): Partial<UserRecord> {
  return {
    first_name: null,
    last_name: null,
    email: null,
    phone: null,
    company_name: null,
    billing: null,
    meta: null,
    alt_uid: null,
    status: USER_STATUS.anonymised,
    updated_at: at,
    UID: maintainUid ? user.UID : null,
  };
}

export function generateUsers(
  seed: number,
  groups: readonly GroupRecord[],
  usersPerGroup: number,
  todayStart: number,
): UserRecord[] {
  const rng = createRng(seed, 'users');
  const span = 730 * DAY_MS;
  const drafts: { groupId: number; at: number }[] = [];
  for (const g of groups) {
    const n = Math.max(8, Math.round(usersPerGroup * g.weight * 3));
    for (let i = 0; i < n; i++)
      drafts.push({ groupId: g.id, at: todayStart - span + Math.floor(rng.next() * (span - 3_600_000)) });
  }
  drafts.sort((a, b) => a.at - b.at);
  const users = drafts.map((d, i) => {
    const user = newPerson(rng, i + 1, d.groupId, d.at);
    const life = todayStart - d.at;
    if (user.last_login !== null) user.last_login = d.at + Math.floor(rng.next() * life);
    user.updated_at = d.at + Math.floor(rng.next() * life);
    const roll = rng.next();
    if (roll < 0.05) {
      user.status = USER_STATUS.deactivated;
      user.deleted_at = user.updated_at;
    } else if (roll < 0.08) {
      Object.assign(user, anonymisedFields(user, user.updated_at, rng.chance(0.5)));
    }
    return user;
  });
  // Every group holds the identifiers a client must URL-encode: an email with +, UIDs with / and a space.
  for (const g of groups) {
    const [a, b, c] = users.filter((u) => u.groupId === g.id && u.status === USER_STATUS.active);
    if (a) a.email = `${a.email!.split('@')[0].replace(/\+.*/, '')}+vip@mail.example.org`;
    if (b) b.UID = `CRM/${b.id}`;
    if (c) c.UID = `ext ${c.id}`;
  }
  return users;
}
