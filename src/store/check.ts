/**
 * What a bucket can do for a store, tried on scratch objects under `_perks/` (removed after): listing
 * (ListObjectsV2), conditional writes (probe.ts: `If-None-Match: *`, `If-Match` and the form of ETag it
 * takes), CopyObject within the bucket, and whether the store can be used as configured (a lease in the store
 * needs both conditional headers enforced; with PERKS_REDIS_URL the lease is Redis's). `perks store check`
 * prints every finding; `perks check` prints the verdict in one line.
 */
import { randomBytes } from 'node:crypto';
import type { StoreClient } from './client.js';
import type { StoreSession } from './session.js';
import { StoreError } from './errors.js';
import { META, INDEX } from './layout.js';
import { enforced, lacking, probeConditionalWrites, type ConditionalWrites } from './probe.js';

export interface Finding {
  ok: boolean;
  what: string;
  text: string;
}

export interface StoreCheck {
  findings: Finding[];
  /** Whether every command can use the store as configured (with or without Redis). */
  usable: boolean;
  conditionalWrites?: ConditionalWrites;
}

const failure = (err: unknown) => (err instanceof StoreError ? err.message : String(err));

async function tryCopy(client: StoreClient): Promise<Finding> {
  const from = `${META}/check-${randomBytes(6).toString('hex')}`;
  const to = `${from}-copy`;
  const body = Buffer.from(`perks store check ${from}`);
  try {
    await client.put(from, body);
    await client.copy(from, to);
    const copied = await client.get(to);
    const same = copied?.body.equals(body) === true;
    return {
      ok: same,
      what: 'CopyObject',
      text: same
        ? 'a copy within the bucket has the same bytes (the views are switched to their names this way)'
        : 'the copy within the bucket does not have the bytes of its source',
    };
  } catch (err) {
    return { ok: false, what: 'CopyObject', text: failure(err) };
  } finally {
    await client.delete(from).catch(() => undefined);
    await client.delete(to).catch(() => undefined);
  }
}

/** The If-Match line: what the service takes, and what the commit and the lease do with it. */
function ifMatchText(c: ConditionalWrites): string {
  switch (c.ifMatch) {
    case 'quoted':
      return 'the ETag taken in quotes, as S3 returns it; a stale one refused (412)';
    case 'unquoted':
      return 'the ETag taken only without its quotes (as Ceph RGW 16 does; perks sends it so); a stale one refused (412)';
    case 'ignored':
      return 'not enforced (a stale ETag was taken)';
    case 'refused':
      return 'refused even with the current ETag, quoted or not';
  }
}

/**
 * Every finding on the store behind `client`; `redis`: whether PERKS_REDIS_URL is set. Errors reaching the
 * store (network, credentials, bucket) are thrown as the client maps them (exit 1, 3, 2).
 */
export async function checkStore(client: StoreClient, redis: boolean): Promise<StoreCheck> {
  const findings: Finding[] = [];
  const listed = await client.list('', 1000);
  const index = listed.some((o) => o.path === INDEX);
  findings.push({
    ok: true,
    what: 'ListObjectsV2',
    text: `the prefix lists (${listed.length === 1000 ? '1000 or more' : listed.length} objects${index ? ', a perks index among them' : ''})`,
  });
  const c = await probeConditionalWrites(client);
  findings.push({
    ok: c.ifNoneMatch,
    what: 'If-None-Match: *',
    text: c.ifNoneMatch
      ? 'a second create of one object refused (412)'
      : 'a second create of one object was taken (not enforced)',
  });
  findings.push({ ok: c.ifMatch === 'quoted' || c.ifMatch === 'unquoted', what: 'If-Match', text: ifMatchText(c) });
  findings.push(await tryCopy(client));
  const copies = findings.at(-1)!.ok;
  const lease = enforced(c)
    ? 'the lease lives in the store itself (conditional writes enforced)'
    : redis
      ? `the lease lives in Redis (PERKS_REDIS_URL): the service does not enforce conditional writes (${lacking(c)})`
      : `no lease possible: the service does not enforce conditional writes (${lacking(c)}); set PERKS_REDIS_URL to a Redis every machine reaches`;
  const usable = copies && (enforced(c) || redis);
  findings.push({ ok: enforced(c) || redis, what: 'lease', text: lease });
  return { findings, usable, conditionalWrites: c };
}

/**
 * One line for `perks check`: the store, the generation it holds and what the probe of its conditional
 * writes found (the lease's home); not ok when no command could write it as configured.
 */
export async function storeSummary(session: StoreSession, redis: boolean): Promise<Finding> {
  const c = await probeConditionalWrites(session.client);
  const held = session.generation ? `generation ${session.generation}` : 'empty (no publish yet)';
  const ok = enforced(c) || redis;
  const how = enforced(c)
    ? `conditional writes enforced (If-Match takes the ETag ${c.ifMatch}): the lease lives in the store`
    : redis
      ? `conditional writes not enforced (${lacking(c)}): the lease lives in Redis (PERKS_REDIS_URL)`
      : `conditional writes not enforced (${lacking(c)}): set PERKS_REDIS_URL, or no command can write it`;
  return { ok, what: 'output', text: `the store ${session.client.where}, ${held}; ${how}` };
}
