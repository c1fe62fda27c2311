/**
 * A month's state for a group, one vocabulary for the marts (`month_state`), the report and `perks status`:
 * - `partial`: the group's extract starts after the month's first day, so the month is incomplete;
 * - `provisional`: orders may still change: the extract's watermark (the first local day NOT yet extracted) is not
 *   past the month's last day plus the lookback (`lookbackDays`), or there is no readable state yet;
 * - `final`: past the lookback: the extract will not re-read the month's days again;
 * - `signed_off`: signed off with `perks close` (and not reopened), whatever the extract says.
 * "Final" is the data's word, "signed off" finance's: a final month is not signed off until someone closes it.
 * The rule is here once: the report (src/report/closure.ts), `perks status` and the build's `month_states`
 * table (src/transform/sources/month-states.ts) all call `extractStateOf`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULTS } from '../config/index.js';
import { camelKeys } from '../shared/json-keys.js';
import { outputAt } from '../output/index.js';

export const MONTH_STATES = ['partial', 'provisional', 'final', 'signed_off'] as const;
export type MonthState = (typeof MONTH_STATES)[number];
/** What the extract alone says of a month (signed off is the close record's word). */
export type ExtractState = Exclude<MonthState, 'signed_off'>;
/** The first month the build's `month_states` table holds (no Perks data is older). */
export const FLOOR_MONTH = '2000-01';

/** What the extract writes to <out>/state/orders/<organisation_group_id>.json (unknown keys kept), as the code names it. */
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
export const OrdersState = z.looseObject({
  /** Absent until the first pass has finished. */
  watermark: day.optional(),
  /** First local day ever extracted. */
  firstDay: day.optional(),
  /** Absent in states written before it was recorded: the lookback was the default then. */
  lookbackDays: z.int().min(0).default(DEFAULTS.lookbackDays),
});
export type OrdersState = z.infer<typeof OrdersState>;
/** A group's orders state as read: undefined when there is none, `{ error }` when it cannot be read. */
export type ReadOrdersState = OrdersState | { error: string } | undefined;

export const ordersStateDir = (outDir: string): string => outputAt(outDir).state('orders');
export const ordersStatePath = (outDir: string, groupId: number): string =>
  join(ordersStateDir(outDir), `${groupId}.json`);

/** Reads a group's orders state; undefined when missing, `{ error }` when present but unreadable. */
export async function readOrdersState(outDir: string, groupId: number): Promise<ReadOrdersState> {
  let text: string;
  try {
    text = await readFile(ordersStatePath(outDir, groupId), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { error: (err as Error).message };
  }
  try {
    const parsed = OrdersState.safeParse(camelKeys(JSON.parse(text))); // first_day, or firstDay of an older release
    return parsed.success
      ? parsed.data
      : { error: `unexpected content (${parsed.error.issues[0]?.path.join('.') || 'root'})` };
  } catch {
    return { error: 'not valid JSON' };
  }
}

/** The groups that have an orders state file (`<id>.json`), in id order. */
export async function groupsWithOrdersState(outDir: string): Promise<number[]> {
  const names = await readdir(ordersStateDir(outDir)).catch(() => [] as string[]);
  return names
    .flatMap((n) => (/^\d+\.json$/.test(n) ? [Number(n.slice(0, -'.json'.length))] : []))
    .sort((a, b) => a - b);
}

/** `day` plus `n` days (YYYY-MM-DD, calendar arithmetic). */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** A calendar month by its first and last day (YYYY-MM-DD). */
export interface MonthDays {
  readonly start: string;
  readonly end: string;
}

/** The month of `ym` (YYYY-MM) as its first and last day. */
export function monthDays(ym: string): MonthDays {
  const start = `${ym}-01`;
  const next = new Date(`${start}T00:00:00Z`);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return { start, end: addDays(next.toISOString().slice(0, 10), -1) };
}

/** The day after which the month is final: its last day plus the lookback. */
export const finalAfter = (month: MonthDays, lookbackDays: number): string => addDays(month.end, lookbackDays);

/** THE rule: what the extract's state says of `month` (partial, provisional or final). */
export function extractStateOf(month: MonthDays, state: ReadOrdersState): ExtractState {
  if (state === undefined || 'error' in state || state.watermark === undefined) return 'provisional';
  // A month the extract only partly covers is incomplete, whatever the watermark says.
  if (state.firstDay !== undefined && state.firstDay > month.start) return 'partial';
  return state.watermark > finalAfter(month, state.lookbackDays) ? 'final' : 'provisional';
}

/** The month's state, the close record's sign-off first. */
export const monthStateOf = (month: MonthDays, state: ReadOrdersState, signedOff: boolean): MonthState =>
  signedOff ? 'signed_off' : extractStateOf(month, state);

/**
 * A report's state over its groups: signed off when every group is; final when every group is final or signed
 * off; partial when a group not signed off is partial; else provisional.
 */
export function statesOverGroups(states: readonly MonthState[]): MonthState {
  if (states.length > 0 && states.every((s) => s === 'signed_off')) return 'signed_off';
  if (states.every((s) => s === 'signed_off' || s === 'final')) return 'final';
  return states.includes('partial') ? 'partial' : 'provisional';
}

/** The word people read: PARTIAL, PROVISIONAL, FINAL, SIGNED OFF. */
export const monthStateWord = (state: MonthState): string => state.replace('_', ' ').toUpperCase();

/** The month after `ym` (YYYY-MM). */
export function nextMonth(ym: string): string {
  const [y, m] = ym.split('-').map(Number);
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** A month and its state. */
export interface MonthWithState {
  readonly month: string;
  readonly state: MonthState;
}

/**
 * A group's months from its extract's first day to its watermark, and those signed off, each once in month order:
 * signed off when signed off, else the extract's state (the marts' month_state). Empty without a finished extract
 * (but the months signed off).
 */
export function monthStatesOf(state: ReadOrdersState, signedOff: readonly string[]): MonthWithState[] {
  const states = new Map<string, MonthState>(signedOff.map((m) => [m, 'signed_off']));
  if (state !== undefined && !('error' in state) && state.watermark !== undefined && state.firstDay !== undefined) {
    const last = state.watermark.slice(0, 7);
    for (let ym = state.firstDay.slice(0, 7); ym <= last; ym = nextMonth(ym))
      if (!states.has(ym)) states.set(ym, extractStateOf(monthDays(ym), state));
  }
  return [...states].sort(([a], [b]) => a.localeCompare(b)).map(([month, s]) => ({ month, state: s }));
}

/**
 * Months and their states as people read them, runs of one state together in month order:
 * "2026-08 partial, 2026-09..2026-10 final, 2026-11 provisional"; "none" for none.
 */
export function monthStatesText(months: readonly MonthWithState[]): string {
  const runs: { first: string; last: string; state: MonthState }[] = [];
  for (const { month, state } of months) {
    const run = runs.at(-1);
    if (run && run.state === state && nextMonth(run.last) === month) run.last = month;
    else runs.push({ first: month, last: month, state });
  }
  if (runs.length === 0) return 'none';
  return runs
    .map((r) => `${r.first === r.last ? r.first : `${r.first}..${r.last}`} ${r.state.replace('_', ' ')}`)
    .join(', ');
}
