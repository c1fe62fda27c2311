/**
 * Losing the local records never duplicates upstream. The scheduled job keeps the ledger in a CI
 * cache, which can be evicted or restored from an older copy; posting every row the ledger does not
 * know would then store it a second time (the API does not deduplicate). Before posting rows the
 * ledger has never seen, the write-back learns what the platform already holds, by the deterministic
 * interaction ids:
 * 1. free: the interactions the extract landed (`<out>/lake/interactions`) that carry one of the ids;
 * 2. when the ledger is empty (a fresh output directory), or step 1 proved it older than the platform,
 *    one listing per user still to post to (paged, over a year back), as for a pending row; users
 *    whose interactions the extract already refreshed in this output directory are not listed (the
 *    landed interactions of step 1 already show theirs), so `perks run` on a fresh directory, which
 *    extracts before it writes back, pays for the users its budget did not refresh only.
 * What is found is recorded as sent, never posted; the calls it cost are counted.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PerksClient } from '../api/index.js';
import { now } from '../shared/clock.js';
import type { Db } from './db.js';
import type { Journal } from './journal.js';
import { entryOf, type EntryStamp, type WritebackRow } from './rows.js';
import { byUser, findUpstream } from './upstream.js';
import { unresolvable } from './recover.js';
import { scanFilesSql, streamFiles } from '../lake/index.js';
import { outputAt } from '../output/index.js';

export const FOUND_IN_LAKE = 'found in the extracted interactions: stored upstream before the ledger knew it';
export const FOUND_UPSTREAM =
  'found upstream before posting: the ledger did not know it (lost or older than the platform)';

/** How far back a listing looks for rows the ledger lost. */
const LOOK_BACK_MS = 366 * 24 * 60 * 60 * 1000;

export interface Learned {
  /** Rows found in the landed interactions. */
  fromLake: number;
  /** Rows found by listing users upstream. */
  fromApi: number;
  /** Users listed upstream. */
  usersListed: number;
  /** Calls those listings cost. */
  calls: number;
  /** Why the listings ran (or did not). */
  reason: 'ledger empty' | 'ledger older than the platform' | 'not needed';
}

export async function learnStored(
  fresh: WritebackRow[],
  ctx: { db: Db; outDir: string; client: PerksClient; journal: Journal; clock: EntryStamp; ledgerEmpty: boolean },
): Promise<{ toPost: WritebackRow[]; learned: Learned }> {
  const learned: Learned = { fromLake: 0, fromApi: 0, usersListed: 0, calls: 0, reason: 'not needed' };
  if (!fresh.length) return { toPost: fresh, learned };
  const inLake = await idsInLake(
    ctx.db,
    ctx.outDir,
    fresh.map((r) => r.interaction_id),
  );
  const found = fresh.filter((r) => inLake.has(r.interaction_id));
  ctx.journal.append(found.map((r) => entryOf(r, 'sent', ctx.clock, { message: FOUND_IN_LAKE })));
  learned.fromLake = found.length;
  let rest = fresh.filter((r) => !inLake.has(r.interaction_id));
  if (!rest.length || !(ctx.ledgerEmpty || found.length)) return { toPost: rest, learned };

  learned.reason = ctx.ledgerEmpty ? 'ledger empty' : 'ledger older than the platform';
  const before = ctx.client.counters.calls;
  const upstream = new Set<number>();
  const refreshed = refreshedUsers(ctx.outDir);
  for (const rows of byUser(rest)) {
    if (rows[0].identifier === 'id' && refreshed.has(`${rows[0].organisation_group_id}/${rows[0].identifier_value}`))
      continue;
    learned.usersListed += 1;
    try {
      const at = rows.map((r) => Date.parse(r.interaction_at));
      for (const id of await findUpstream(ctx.client, {
        ...rows[0],
        ids: rows.map((r) => r.interaction_id),
        around: [Math.min(...at) - LOOK_BACK_MS, now().getTime()],
      }))
        upstream.add(id);
    } catch (err) {
      // A user the platform refuses to list (gone upstream): posting will say so for each row.
      if (!unresolvable(err)) throw err;
    }
  }
  const there = rest.filter((r) => upstream.has(r.interaction_id));
  ctx.journal.append(there.map((r) => entryOf(r, 'sent', ctx.clock, { message: FOUND_UPSTREAM })));
  learned.fromApi = there.length;
  learned.calls = ctx.client.counters.calls - before;
  rest = rest.filter((r) => !upstream.has(r.interaction_id));
  return { toPost: rest, learned };
}

/** `group/user id` of every user whose interactions the extract refreshed (its per-user state). */
function refreshedUsers(outDir: string): Set<string> {
  const dir = outputAt(outDir).state('interactions');
  const out = new Set<string>();
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^\d+(\.shard-\d+-of-\d+)?\.json$/.test(f)) : [];
  for (const f of files) {
    const group = f.split('.')[0];
    try {
      const state = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { users?: Record<string, unknown> };
      for (const id of Object.keys(state.users ?? {})) out.add(`${group}/${id}`);
    } catch {
      // an unreadable state only means those users are listed upstream
    }
  }
  return out;
}

/** The given interaction ids the landed interactions stream holds. */
async function idsInLake(db: Db, outDir: string, ids: number[]): Promise<Set<number>> {
  const files = streamFiles(outDir, 'interactions');
  if (!files.length || !ids.length) return new Set();
  const wanted = new Set(ids);
  const rows = await db.all(
    `SELECT DISTINCT TRY_CAST(interaction_id AS BIGINT) AS id FROM ${scanFilesSql(files, { hive: false })}` +
      ' WHERE TRY_CAST(interaction_id AS BIGINT) IS NOT NULL',
  );
  return new Set(rows.map((r) => Number(r.id)).filter((id) => wanted.has(id)));
}
