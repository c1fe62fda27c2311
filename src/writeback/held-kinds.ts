/**
 * A systematic rejection stops early. When the platform rejects several posts of one kind in a row for
 * the same reason (an interaction_type it does not know, say), every other row of that kind would be
 * rejected too: one call each, minutes of a 120-a-minute budget. The kind is held for the rest of the
 * run: its remaining rows are not posted (no ledger entry, so they are neither sent nor rejected), and
 * the rows already rejected are posted again automatically once their type changes (run.ts), since a
 * 4xx stored nothing upstream.
 */
import type { LedgerEntry, WritebackRow } from './rows.js';
import { TYPES_ENV } from './settings.js';

/** Rejections in a row, for one reason, after which a kind is held. */
export const SYSTEMATIC_REJECTIONS = 3;

export interface HeldKind {
  kind: string;
  interaction_type: string;
  http_status: number | null;
  message: string;
  /** Rows of the kind this run did not post. */
  rows: number;
}

export class HeldKinds {
  private readonly streaks = new Map<string, { reason: string; count: number }>();
  private readonly held = new Map<string, HeldKind>();

  isHeld(kind: string): boolean {
    return this.held.has(kind);
  }

  /** Counts a row that was not posted because its kind is held. */
  skip(row: WritebackRow): void {
    this.held.get(row.kind)!.rows += 1;
  }

  /** Follows each outcome; a kind is held after SYSTEMATIC_REJECTIONS rejections in a row for one reason. */
  record(row: WritebackRow, entry: LedgerEntry): void {
    if (entry.status !== 'rejected') {
      this.streaks.delete(row.kind);
      return;
    }
    const reason = `${entry.http_status ?? ''} ${entry.message ?? ''}`;
    const streak = this.streaks.get(row.kind);
    const count = streak?.reason === reason ? streak.count + 1 : 1;
    this.streaks.set(row.kind, { reason, count });
    if (count >= SYSTEMATIC_REJECTIONS && !this.held.has(row.kind)) {
      this.held.set(row.kind, {
        kind: row.kind,
        interaction_type: row.interaction_type,
        http_status: entry.http_status ?? null,
        message: entry.message ?? '',
        rows: 0,
      });
    }
  }

  list(): HeldKind[] {
    return [...this.held.values()];
  }
}

/** The one line that says what was held and what to set. */
export function heldLine(h: HeldKind): string {
  return (
    `kind ${h.kind} held after ${SYSTEMATIC_REJECTIONS} rejections in a row as interaction_type` +
    ` "${h.interaction_type}" (${h.http_status ?? 'no status'} ${h.message}): ` +
    `${h.rows} rows left unsent for the next run; set ${TYPES_ENV}=${h.kind}=<a type the platform accepts>`
  );
}
