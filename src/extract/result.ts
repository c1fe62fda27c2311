/** Results as data (guide example 10): per stream and group; the CLI prints them and derives the exit code. */
import type { MonthChange } from './windows/settled-guard.js';

export interface GroupTally {
  group?: number;
  windows: number;
  rows: number;
  rejected: number;
  files: number;
  bytes: number;
  /** Rows the listings said they hold (pagination `total`), when they said it. */
  expected?: number;
  /** Local days still inside the lookback: provisional until a later run re-reads them. */
  provisional?: { from: string; to: string };
  /** Per-user streams: users refreshed by reason, and users deferred to a later run. */
  users?: Record<string, number>;
  /** Per-user streams: users by rank that did not fit the budget (user-selection.ts). */
  waiting?: Record<string, number>;
  notes: string[];
  /** Windowed streams with a guard: each month weighed (settled-guard.ts), what the re-read found and whether it was applied. */
  months?: MonthChange[];
  /** Users stream: the users' changes since the group's last snapshot, by kind (joined, anonymised, …). */
  changes?: Record<string, number>;
  /** API traffic and time of this group's part (calls made for the stream as a whole, such as a shard's hand-off, count only in the stream's). */
  calls?: number;
  retries?: number;
  throttled?: number;
  ms?: number;
}

export interface StreamResult {
  name: string;
  status: 'success' | 'error' | 'skipped';
  groups: GroupTally[];
  rows: number;
  rejected: number;
  calls: number;
  retries: number;
  throttled: number;
  ms: number;
  error?: string;
  /** The exit code the error maps to (only when status is 'error'). */
  exitCode?: number;
  /** The stream failed for these groups only: the others landed, and the streams after it run. */
  failedGroups?: number[];
}

/** A stream's result before anything ran; a skipped stream keeps it (with a note of why, in `groups`). */
export function emptyStreamResult(
  name: string,
  status: StreamResult['status'],
  groups: GroupTally[] = [],
): StreamResult {
  return { name, status, groups, rows: 0, rejected: 0, calls: 0, retries: 0, throttled: 0, ms: 0 };
}

export function newTally(group?: number): GroupTally {
  return { group, windows: 0, rows: 0, rejected: 0, files: 0, bytes: 0, notes: [] };
}

export function addCommit(t: GroupTally, c: { rows: number; files: number; bytes: number }): void {
  t.files += c.files;
  t.bytes += c.bytes;
}
