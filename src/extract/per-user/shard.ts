/**
 * Sharding (`--shard K/N`): a stable split of the per-user work. A user belongs to shard
 * `fnv1a32(String(user id)) mod N` + 1, whatever the run, the machine or the order of the users, so N
 * workers together refresh each selected user exactly once. The other streams (groups, users, offers,
 * orders, redemption stats) are landed by shard 1 only (see handoff.ts): they cost one call per page
 * or per window, the per-user streams one call per user.
 *
 * Per-user state is written per shard (`<stream>/<group>.shard-K-of-N.json`) so no two workers write
 * one state file; it is read as the merge of every file of the group (latest refresh per user wins),
 * so a later run, sharded with any N or not sharded, sees what every shard did.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stateRoot } from '../../lake/index.js';
import { ConfigError } from '../../shared/exit-codes.js';
import type { Shard } from '../run-context.js';
import { PerUserStateSchema, type PerUserState, type StateStore } from '../state.js';

export type { Shard };

export const MAX_SHARDS = 1024;

/** `K/N` from the command line; one clear line when it is not a shard of N. */
export function parseShard(text: string | undefined): Shard | undefined {
  if (text === undefined) return undefined;
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > MAX_SHARDS || index < 1 || index > count) {
    throw new ConfigError(
      `--shard=${JSON.stringify(text)} is invalid: expected K/N with 1 <= K <= N <= ${MAX_SHARDS}, e.g. --shard 2/4`,
    );
  }
  return { index, count };
}

export const shardLabel = (s: Shard) => `${s.index}/${s.count}`;

/**
 * Shards of one credential pace together only through PERKS_REDIS_URL; without it each paces at the
 * full limit and together they are throttled. A warning, not an error: one shard alone (a test, a
 * single machine) is legitimate.
 */
export function unsharedLimitWarning(shard: Shard | undefined, redisUrl: string | undefined): string | undefined {
  if (!shard || shard.count < 2 || redisUrl) return undefined;
  return (
    `warning: --shard ${shardLabel(shard)} without PERKS_REDIS_URL: the ${shard.count} shards do not share the rate limit, ` +
    `so each paces at the full limit and together they are throttled (429); set PERKS_REDIS_URL to one Redis for every shard (docs/scale-out.md)`
  );
}

/** FNV-1a, 32 bits: tiny, stable across platforms and languages (documented for operators). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The shard (1-based) a user belongs to among `count`. */
export function shardOfUser(userId: number, count: number): number {
  return (fnv1a32(String(userId)) % count) + 1;
}

export function inShard(userId: number, shard: Shard | undefined): boolean {
  return !shard || shard.count === 1 || shardOfUser(userId, shard.count) === shard.index;
}

/** Whether this worker lands the streams that are not per user (shard 1, or no shard). */
export function landsSharedStreams(shard: Shard | undefined): boolean {
  return !shard || shard.index === 1;
}

/** The state key a worker writes a group's per-user state under. */
export function perUserStateKey(group: number, shard: Shard | undefined): string {
  return shard && shard.count > 1 ? `${group}.shard-${shard.index}-of-${shard.count}` : String(group);
}

const stateFileOf = (group: number) => new RegExp(`^${group}(\\.shard-\\d+-of-\\d+)?\\.json$`);

/**
 * A group's per-user state as this worker sees it: every state file of the group merged (the latest
 * refresh of each user wins), the users kept to this worker's shard, and its own pass (resume) only.
 */
export async function readPerUserState(
  where: { outDir: string; state: StateStore; shard?: Shard },
  stream: string,
  group: number,
): Promise<PerUserState> {
  const { shard } = where;
  const own = perUserStateKey(group, shard);
  const names = await readdir(join(stateRoot(where.outDir), stream)).catch(() => [] as string[]);
  const keys = names.filter((n) => stateFileOf(group).test(n)).map((n) => n.slice(0, -'.json'.length));
  if (!keys.includes(own)) keys.push(own);
  const merged: PerUserState = { users: {} };
  for (const key of keys.sort()) {
    const value = await where.state.read(stream, key, PerUserStateSchema);
    if (!value) continue;
    if (key === own) merged.pass = value.pass;
    for (const [id, refreshed] of Object.entries(value.users ?? {})) {
      if (!inShard(Number(id), shard)) continue;
      const seen = merged.users[id];
      if (!seen || refreshed.at > seen.at) merged.users[id] = refreshed;
    }
  }
  return merged;
}
