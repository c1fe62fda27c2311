/** Which of the rows the models produce go out: the ledger says what was sent, rejected or is pending. */
import type { LedgerState } from './ledger.js';
import type { TypeCount, WritebackResult } from './result.js';
import type { WritebackRow } from './rows.js';

/**
 * The rows the models produce against the ledger: sent ones and rejected ones (unless retried) are skipped and
 * counted; the others are fresh (never seen) or to retry. Counted per kind and type in `result`.
 */
export function sortByLedger(
  rows: WritebackRow[],
  state: LedgerState,
  retryRejected: boolean | undefined,
  result: WritebackResult,
): { fresh: WritebackRow[]; retry: WritebackRow[] } {
  const fresh: WritebackRow[] = [];
  const retry: WritebackRow[] = [];
  const counts = new Map<string, TypeCount>();
  for (const row of rows) {
    const key = `${row.kind}\u0000${row.interaction_type}`;
    const count = counts.get(key) ?? { kind: row.kind, interaction_type: row.interaction_type, rows: 0, to_send: 0 };
    counts.set(key, count);
    count.rows += 1;
    const known = state.status.get(row.interaction_id);
    if (known === 'sent') result.skipped_already_sent += 1;
    else if (known === 'rejected' && !retriesRejected(row, state, retryRejected)) result.skipped_rejected += 1;
    else if (known === 'rejected') {
      retry.push(row); // not stored (a 4xx), so posting it again cannot store it twice
      count.to_send += 1;
    } else if (known === undefined) {
      fresh.push(row);
      count.to_send += 1;
    } // 'pending': resolved above (a dry run only counts it)
  }
  result.rows = rows.length;
  result.by_type = [...counts.values()].sort(
    (a, b) => a.kind.localeCompare(b.kind) || a.interaction_type.localeCompare(b.interaction_type),
  );
  result.retried_rejected = retry.length;
  return { fresh, retry };
}

/**
 * A rejected row is posted again with --retry-rejected, or by itself when its interaction_type is no
 * longer the one it was rejected as (PERKS_WRITEBACK_TYPES changed): a 4xx stored nothing upstream, so
 * this cannot store it twice. Rows the operator settled as rejected are never posted again.
 */
function retriesRejected(row: WritebackRow, state: LedgerState, retryRejected?: boolean): boolean {
  if (state.settled.has(row.interaction_id)) return false;
  return retryRejected === true || state.rejectedAs.get(row.interaction_id) !== row.interaction_type;
}
