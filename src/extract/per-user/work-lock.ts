/**
 * The output directory's lock, scoped to what a worker writes, so that several workers of one round
 * share one output directory without blocking each other, while two runs of the same work still
 * exclude each other.
 *
 * A run of the whole organisation (no `--shard`, no `--groups`) holds `<out>/.perks.lock`, as before.
 * A worker holds `<out>/.locks/<scope>/.perks.lock` (the lake's lock, so a dead holder is taken over),
 * with its scope beside it in `scope.json`. After taking its own lock a run looks at every other live
 * lock and gives up (exit 5) when their scopes overlap: the same groups and the same users. Both sides
 * take first and look second, so of two overlapping runs starting together at least one sees the other.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  acquireLock,
  LockedError,
  lockPath,
  pidAlive,
  STALE_LOCK_MS,
  writeJsonAtomic,
  type Lock,
  type LockHolder,
} from '../../lake/index.js';
import { sameProcessSpace } from '../../shared/process-identity.js';
import { shardLabel, type Shard } from './shard.js';

export interface WorkScope {
  /** The `--groups` slice; undefined: every group. */
  groups?: number[];
  shard?: Shard;
}

const LOCKS_DIR = '.locks';

export const isWholeScope = (s: WorkScope) => !s.groups && !s.shard;

export function describeScope(s: WorkScope): string {
  if (isWholeScope(s)) return 'the whole organisation';
  const groups = s.groups ? `group${s.groups.length > 1 ? 's' : ''} ${s.groups.join(', ')}` : 'every group';
  return s.shard ? `shard ${shardLabel(s.shard)} of ${groups}` : groups;
}

/** The lock folder name of a scope: readable when short, hashed when the group list is long. */
export function scopeKey(s: WorkScope): string {
  const ids = s.groups ? [...s.groups].sort((a, b) => a - b).join('-') : 'all';
  const groups = ids.length > 64 ? `h${createHash('sha1').update(ids).digest('hex').slice(0, 12)}` : ids;
  return `groups-${groups}${s.shard ? `.shard-${s.shard.index}-of-${s.shard.count}` : ''}`;
}

/** Two scopes overlap when they may write the same partition or state file. */
export function scopesOverlap(a: WorkScope, b: WorkScope): boolean {
  const groups = !a.groups || !b.groups || a.groups.some((g) => b.groups!.includes(g));
  const users = !a.shard || !b.shard || a.shard.count !== b.shard.count || a.shard.index === b.shard.index;
  return groups && users;
}

/** Takes the lock of the scope, then makes sure no live run holds an overlapping one. */
export async function acquireWorkLock(outDir: string, scope: WorkScope): Promise<Lock> {
  let lock: Lock;
  if (isWholeScope(scope)) {
    lock = await acquireLock(outDir);
  } else {
    const dir = join(outDir, LOCKS_DIR, scopeKey(scope));
    await writeJsonAtomic(join(dir, 'scope.json'), scope);
    lock = await acquireLock(dir).catch((err: unknown) => {
      if (!(err instanceof LockedError)) throw err;
      throw new LockedError(
        err.message.replace(`output directory ${dir}`, `${describeScope(scope)} in output directory ${outDir}`),
      );
    });
  }
  try {
    await assertNoOverlap(outDir, scope, lock.path);
  } catch (err) {
    await lock.release();
    throw err;
  }
  return lock;
}

/** LockedError when a live run other than `ownLock` holds a scope overlapping `scope`. */
export async function assertNoOverlap(outDir: string, scope: WorkScope, ownLock: string): Promise<void> {
  const others: { path: string; scope: WorkScope }[] = [{ path: lockPath(outDir), scope: {} }];
  const root = join(outDir, LOCKS_DIR);
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const theirs = await readJson<WorkScope>(join(root, name, 'scope.json'));
    others.push({ path: lockPath(join(root, name)), scope: theirs ?? {} });
  }
  for (const other of others) {
    if (other.path === ownLock || !scopesOverlap(scope, other.scope)) continue;
    const holder = await readJson<LockHolder>(other.path);
    if (holder === undefined || !isLive(holder)) continue;
    throw new LockedError(
      `${describeScope(scope)} in output directory ${outDir} overlaps ${describeScope(other.scope)}, held by another run ` +
        `(pid ${holder.pid} on ${holder.host}, started ${holder.started_at}): both would write the same files; ` +
        `wait for it to finish, or give the workers disjoint --shard or --groups`,
    );
  }
}

function isLive(holder: LockHolder): boolean {
  // its pid means what ours do only on this host, boot and PID namespace (another container shares the host's name)
  if (sameProcessSpace(holder)) return pidAlive(holder.pid);
  const beat = Date.parse(holder.heartbeat_at);
  return Number.isNaN(beat) || Date.now() - beat < STALE_LOCK_MS;
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}
