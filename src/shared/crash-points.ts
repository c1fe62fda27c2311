import { existsSync } from 'node:fs';

/**
 * Named crash points, for the reliability suite only (test/reliability): with
 * `PERKS_CRASH_AT=<point>[:<n>]` the process kills itself with SIGKILL the n-th time (default the
 * first) it passes <point>, exactly as a power cut or `kill -9` would stop it there. Unset, a call is
 * one comparison. Each point is one line at the commit step it names:
 *
 * - after-page     src/extract/landing/listing.ts  a page is in the partition's spill, nothing committed
 * - mid-parquet    src/lake/partition-writer.ts DuckDB is writing the temporary Parquet file (the kill
 *                                               lands once that file exists, and at the latest
 *                                               when the COPY returns, whatever the machine's load)
 * - before-rename  src/lake/partition-writer.ts the temporary file is complete and fsynced, not renamed (a
 *                                               replacement: the journal already names the switch)
 * - after-rename   src/lake/partition-writer.ts the file is in place (the files it replaces not yet gone);
 *                                               the state does not know it yet
 * - after-history  src/extract/windows/windowed-job.ts  a window's new or changed orders are committed to the order
 *                                               history (order_versions); the window itself is not committed yet
 * - after-state    src/lake/state-store.ts      the state names the window; the run manifest is not written
 * - before-unlock  src/lake/lock.ts             the run manifest is written; the lock is still held
 * - mid-build      src/transform/runner/run-models.ts  a model is built in the new warehouse (n: the n-th model)
 * - before-swap    src/transform/warehouse/build-once.ts the new warehouse is complete, not yet renamed over the old
 * - after-post     src/writeback/send.ts        a batch of interactions is posted and answered; no outcome recorded
 * - compact-before-switch src/compact/compact.ts the month's new file is complete, checked and fsynced; the
 *                                               journal names the switch; nothing renamed yet
 * - compact-after-rename  src/compact/compact.ts the new file is in place beside the files it replaces
 * - compact-mid-remove    src/compact/compact.ts the first replaced file is gone, the others not yet
 * - store-mid-upload      src/store/publish.ts   a publish's first object is in the store, the others not yet
 * - store-before-commit   src/store/publish.ts   every object is uploaded; the store's index does not name them
 * - store-after-commit    src/store/publish.ts   the index names them; readers' manifests and removals not done
 * - store-mid-views       src/store/views.ts     the index names the run's views at their staged keys; the first
 *                                               is copied to its own name, the others not yet
 * - store-mid-garbage     src/store/views.ts     the first object the new index no longer names is removed
 * - close-before-publish  src/commands/close.ts  the close record has its new line in the working copy only
 * - close-after-publish   src/commands/close.ts  the line is committed to the store; nothing reported yet
 */
export const EXTRACT_CRASH_POINTS = [
  'after-page',
  'mid-parquet',
  'before-rename',
  'after-rename',
  'after-state',
  'before-unlock',
] as const;
/** Only where a window has new or changed orders (test/close/history-crash.test.ts), so not in the suites' loop over every extract point. */
export const HISTORY_CRASH_POINTS = ['after-history'] as const;
export const BUILD_CRASH_POINTS = ['mid-build', 'before-swap'] as const;
export const COMPACT_CRASH_POINTS = ['compact-before-switch', 'compact-after-rename', 'compact-mid-remove'] as const;
export const STORE_CRASH_POINTS = [
  'store-mid-upload',
  'store-before-commit',
  'store-after-commit',
  'store-mid-views',
  'store-mid-garbage',
] as const;
export const CLOSE_CRASH_POINTS = ['close-before-publish', 'close-after-publish'] as const;
export const CRASH_POINTS = [
  ...EXTRACT_CRASH_POINTS,
  ...HISTORY_CRASH_POINTS,
  ...BUILD_CRASH_POINTS,
  'after-post',
  ...COMPACT_CRASH_POINTS,
  ...STORE_CRASH_POINTS,
  ...CLOSE_CRASH_POINTS,
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];
export type ExtractCrashPoint = (typeof EXTRACT_CRASH_POINTS)[number];

export const CRASH_ENV = 'PERKS_CRASH_AT';

const wanted = /^([a-z-]+)(?::(\d+))?$/.exec(process.env[CRASH_ENV] ?? '');
const target = wanted ? { point: wanted[1], nth: Number(wanted[2] ?? 1) } : undefined;
let passes = 0;

function due(point: CrashPoint): boolean {
  return target?.point === point && ++passes >= target.nth;
}

/** Dies here when PERKS_CRASH_AT names this point (and this is its n-th pass). */
export function crashPoint(point: CrashPoint): void {
  if (due(point)) process.kill(process.pid, 'SIGKILL');
}

let pendingKill = false;

/**
 * Dies inside the asynchronous work that starts right after, as soon as it has created `file`
 * (polled every millisecond). `crashIfPending` after that work makes the kill certain even if the
 * work ended before a poll saw the file: a loaded machine cannot make the point pass unkilled.
 */
export function crashWhenExists(point: CrashPoint, file: string): void {
  if (!due(point)) return;
  pendingKill = true;
  setInterval(() => {
    if (existsSync(file)) process.kill(process.pid, 'SIGKILL');
  }, 1);
}

/** Dies now if a `crashWhenExists` kill is scheduled and has not landed yet. */
export function crashIfPending(): void {
  if (pendingKill) process.kill(process.pid, 'SIGKILL');
}
