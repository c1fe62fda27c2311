/**
 * The months a run held back (the settled-change guard, windows/settled-guard.ts), as the summary, the alert
 * and the exit code read them, and the one command that applies them once the operator has checked the API.
 */
import type { StreamResult } from './result.js';
import { allowanceText } from './windows/settled-guard.js';

export interface HeldMonth {
  readonly stream: string;
  readonly group: number;
  /** "YYYY-MM" */
  readonly month: string;
  /** The local days re-read: the first, and the day after the last. */
  readonly from: string;
  readonly to: string;
  readonly breach: string;
}

/** Every month a stream of the run held. */
export function heldMonths(streams: readonly StreamResult[]): HeldMonth[] {
  return streams.flatMap((s) =>
    s.groups.flatMap((g) =>
      (g.months ?? [])
        .filter((m) => m.outcome === 'held')
        .map((m) => ({ stream: s.name, group: g.group!, month: m.month, from: m.from, to: m.to, breach: m.breach! })),
    ),
  );
}

/** The command that re-reads exactly the held days and applies what the API lists then. */
export function acceptCommand(held: readonly HeldMonth[]): string {
  const streams = [...new Set(held.map((h) => h.stream))].join(',');
  const groups = [...new Set(held.map((h) => h.group))].sort((a, b) => a - b).join(',');
  const from = held.map((h) => h.from).sort()[0];
  const to = held
    .map((h) => h.to)
    .sort()
    .at(-1);
  return `perks extract --streams ${streams} --groups ${groups} --start-date ${from} --end-date ${to} --accept-changes`;
}

/** One line: what was held, why, and how to apply it. */
export function heldMessage(held: readonly HeldMonth[]): string | undefined {
  if (!held.length) return undefined;
  const what = held.map((h) => `group ${h.group} ${h.month} (${h.stream}: ${h.breach})`).join('; ');
  return (
    `held, not applied: the re-read of ${held.length === 1 ? 'a final month' : `${held.length} final months`} would change more than the guard allows` +
    ` (${allowanceText()}): ${what}; the lake keeps ${held.length === 1 ? 'it' : 'them'} as before. ` +
    `Check the API (PERKS_BASE_URL, the credential); if it is right, apply it with \`${acceptCommand(held)}\``
  );
}
