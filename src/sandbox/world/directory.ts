/** The user directory: users by id, by group (in id order) and by email/UID within a group. */
import { SandboxError } from '../errors.js';
import type { Identifier } from '../../resources/user.js';
import type { UserRecord } from './users.js';

const emailKey = (groupId: number, email: string) => `${groupId}\u0000${email.toLowerCase()}`;
const uidKey = (groupId: number, uid: string) => `${groupId}\u0000${uid}`;

export class UserDirectory {
  private readonly byId = new Map<number, UserRecord>();
  private readonly byGroup = new Map<number, UserRecord[]>();
  private readonly byEmail = new Map<string, UserRecord>();
  private readonly byUid = new Map<string, UserRecord>();
  private lastId = 0;
  /** Bumped on every add or change, so derived views know to rebuild. */
  version = 0;

  constructor(users: Iterable<UserRecord>) {
    for (const u of users) this.add(u);
  }

  nextId(): number {
    return this.lastId + 1;
  }

  add(user: UserRecord): void {
    this.version++;
    this.byId.set(user.id, user);
    this.lastId = Math.max(this.lastId, user.id);
    const list = this.byGroup.get(user.groupId) ?? [];
    list.push(user);
    this.byGroup.set(user.groupId, list);
    this.index(user);
  }

  get(id: number): UserRecord | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<UserRecord> {
    return this.byId.values();
  }

  /** A group's users in id order (creation order). */
  inGroup(groupId: number): readonly UserRecord[] {
    return this.byGroup.get(groupId) ?? [];
  }

  find(groupId: number, identifier: Identifier, value: string): UserRecord | undefined {
    if (identifier === 'id') {
      const user = /^\d+$/.test(value) ? this.byId.get(Number(value)) : undefined;
      return user?.groupId === groupId ? user : undefined;
    }
    if (identifier === 'email') return this.byEmail.get(emailKey(groupId, value));
    return this.byUid.get(uidKey(groupId, value));
  }

  /** The user a create would collide with: same email, or same UID (a kept UID of an anonymised user too). */
  existing(
    groupId: number,
    email: string | undefined,
    uid: string | undefined,
    except?: UserRecord,
  ): { field: string; user: UserRecord } | undefined {
    const byEmail = email ? this.byEmail.get(emailKey(groupId, email)) : undefined;
    if (byEmail && byEmail !== except) return { field: 'email', user: byEmail };
    const byUid = uid ? this.byUid.get(uidKey(groupId, uid)) : undefined;
    if (byUid && byUid !== except) return { field: 'UID', user: byUid };
    return undefined;
  }

  /** Changes identity fields through here, so the indexes stay right. */
  update(user: UserRecord, change: Partial<UserRecord>): void {
    this.version++;
    this.unindex(user);
    Object.assign(user, change);
    this.index(user);
  }

  private index(u: UserRecord): void {
    if (u.email) this.byEmail.set(emailKey(u.groupId, u.email), u);
    if (u.UID) this.byUid.set(uidKey(u.groupId, u.UID), u);
  }

  private unindex(u: UserRecord): void {
    if (u.email && this.byEmail.get(emailKey(u.groupId, u.email)) === u)
      this.byEmail.delete(emailKey(u.groupId, u.email));
    if (u.UID && this.byUid.get(uidKey(u.groupId, u.UID)) === u) this.byUid.delete(uidKey(u.groupId, u.UID));
  }
}

export function requireUser(dir: UserDirectory, groupId: number, identifier: Identifier, value: string): UserRecord {
  const user = dir.find(groupId, identifier, value);
  if (!user) throw new SandboxError('not_found', 404, 'User not found.');
  return user;
}
