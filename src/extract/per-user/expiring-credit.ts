/**
 * Users whose credit expired since it was last read: their latest read (the lake's credit) lists an Available
 * item whose expires_at has passed. The marts already count such an item expired (int_credit_balances); the
 * planner ranks these users for a refresh that confirms it (user-selection.ts).
 */
import { globUnder, scanSql, streamDir, withLakeConnection } from '../../lake/index.js';
import { hasParquet } from '../landing/lake-files.js';

/** A lake that cannot say (files of a layout without items, a damaged file): no user is ranked for expiry. */
const UNANSWERABLE = /Binder Error|No magic bytes|not a parquet file|Invalid Input Error|Corrupt|truncated/i;

export async function expiredCreditUsers(outDir: string, group: number, now: Date): Promise<Set<number>> {
  const dir = streamDir(outDir, 'credit', group);
  const found = new Set<number>();
  if (!hasParquet(dir)) return found;
  try {
    await withLakeConnection(async (c) => {
      const reader = await c.runAndReadAll(
        `WITH latest AS (
           SELECT user_id, credits FROM ${scanSql('$glob')}
           QUALIFY row_number() OVER (PARTITION BY user_id ORDER BY _extracted_at DESC, _run_id DESC) = 1
         )
         SELECT user_id::BIGINT AS id FROM latest
         WHERE len(list_filter(coalesce(credits, []), lambda i: i.status = 'Available' AND i.expires_at <= $now::TIMESTAMPTZ)) > 0`,
        { glob: globUnder(dir, '**', '*.parquet'), now: now.toISOString() },
      );
      for (const row of reader.getRowObjectsJS()) found.add(Number(row.id));
    });
  } catch (err) {
    if (!UNANSWERABLE.test((err as Error).message)) throw err;
    found.clear();
  }
  return found;
}
