/** The write-back's posting loop: write-ahead 'pending' entries, the posts, then their outcomes. */
import { crashPoint } from '../shared/crash-points.js';
import type { OutputHooks } from '../shared/output-hooks.js';
import type { Journal } from './journal.js';
import type { HeldKinds } from './held-kinds.js';
import { postOnce, type PosterOptions } from './poster.js';
import type { LedgerClock } from './ledger-clock.js';
import { entryOf, type LedgerEntry, type WritebackRow } from './rows.js';

/**
 * Posts in batches: the batch's 'pending' entries reach the disk before any of its posts leave, and
 * its outcomes are recorded before the next batch. A failure that is not a row's own (API down after
 * retries, credentials refused) stops the run once the batch's other outcomes are recorded. A kind the
 * platform rejects systematically is held (held-kinds.ts): its later rows are not posted.
 */
export async function sendAll(
  rows: WritebackRow[],
  journal: Journal,
  clock: LedgerClock,
  batchSize: number,
  poster: PosterOptions,
  /** The recorded entry, or the reason the row stays pending (its storage could not be learned). */
  onOutcome: (row: WritebackRow, entry: LedgerEntry | string) => void,
  held: HeldKinds,
  /** The output's hook: with a store, the journal's new lines reach it (output-hooks.ts). */
  journalWritten: OutputHooks['journalWritten'],
): Promise<void> {
  let next = 0;
  while (next < rows.length) {
    const batch: WritebackRow[] = [];
    for (; next < rows.length && batch.length < batchSize; next++) {
      if (held.isHeld(rows[next].kind)) held.skip(rows[next]);
      else batch.push(rows[next]);
    }
    if (!batch.length) break;
    journal.append(batch.map((row) => entryOf(row, 'pending', clock)));
    await journalWritten(journal.path); // with a store, the pending entries reach it before the posts leave
    const settled = await Promise.allSettled(batch.map((row) => postOnce(row, poster)));
    crashPoint('after-post'); // the posts are answered (stored upstream), their outcomes not yet recorded
    await clock.follow(); // outcomes after the stamp of an extract that began during the posts: it may have missed them
    const outcomes: LedgerEntry[] = [];
    let failure: { error: unknown } | undefined;
    settled.forEach((s, k) => {
      if (s.status === 'rejected') {
        failure ??= { error: s.reason };
        return;
      }
      const o = s.value;
      if (o.status === 'unresolved') {
        onOutcome(batch[k], o.message); // no entry: the row stays pending, looked up again next run
        return;
      }
      const entry =
        o.status === 'sent'
          ? entryOf(batch[k], 'sent', clock, {
              message: o.recovered ? 'found upstream after an unanswered post' : null,
            })
          : entryOf(batch[k], 'rejected', clock, { http_status: o.http_status, message: o.message });
      outcomes.push(entry);
      held.record(batch[k], entry);
      onOutcome(batch[k], entry);
    });
    journal.append(outcomes);
    if (failure !== undefined) throw failure.error;
  }
}
