/**
 * Closed or provisional. The extract re-reads the last `lookbackDays` local days on every run, so a day's
 * orders may still change until the watermark (the first local day NOT yet extracted) has moved more than
 * `lookbackDays` past it. A month is CLOSED for a group when its orders watermark is past the month's last
 * day plus the lookback; otherwise, or when there is no readable state, it is PROVISIONAL.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULTS } from '../config/index.js';
import type { GroupClosure } from '../closes/index.js';
import { addDays, monthContaining, type ReportMonth } from './month.js';

/** What the extract writes to <out>/state/orders/<organisation_group_id>.json (unknown keys kept). */
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

export function ordersStatePath(outDir: string, groupId: number): string {
  return join(outDir, 'state', 'orders', `${groupId}.json`);
}

/** Reads a group's orders state; undefined when missing, `{ error }` when present but unreadable. */
export async function readOrdersState(
  outDir: string,
  groupId: number,
): Promise<OrdersState | { error: string } | undefined> {
  let text: string;
  try {
    text = await readFile(ordersStatePath(outDir, groupId), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { error: (err as Error).message };
  }
  try {
    const parsed = OrdersState.safeParse(JSON.parse(text));
    return parsed.success
      ? parsed.data
      : { error: `unexpected content (${parsed.error.issues[0]?.path.join('.') || 'root'})` };
  } catch {
    return { error: 'not valid JSON' };
  }
}

/** The closure rule, applied to one group's state. */
export function closureOf(
  month: ReportMonth,
  groupId: number,
  state: OrdersState | { error: string } | undefined,
): GroupClosure {
  if (state === undefined)
    return { groupId, status: 'provisional', reason: `no extract state for group ${groupId} yet` };
  if ('error' in state)
    return {
      groupId,
      status: 'provisional',
      reason: `the extract state of group ${groupId} is unreadable: ${String(state.error)}`,
    };
  if (state.watermark === undefined)
    return { groupId, status: 'provisional', reason: `the first extract of group ${groupId} has not finished yet` };
  if (state.firstDay !== undefined && state.firstDay > month.start) {
    // A month the extract only partly covers is incomplete, whatever the watermark says.
    return {
      groupId,
      status: 'provisional',
      watermark: state.watermark,
      firstDay: state.firstDay,
      lookbackDays: state.lookbackDays,
      reason: `the extract of group ${groupId} starts on ${state.firstDay}, after the month's first day, so the month is incomplete (backfill it with \`perks extract --start-date ${month.start}\`)`,
    };
  }
  const closesAfter = addDays(month.end, state.lookbackDays);
  const closed = state.watermark > closesAfter;
  const extractedTo = addDays(state.watermark, -1);
  return {
    groupId,
    status: closed ? 'closed' : 'provisional',
    watermark: state.watermark,
    firstDay: state.firstDay,
    lookbackDays: state.lookbackDays,
    closesAfter,
    reason: closed
      ? `group ${groupId} is extracted to ${extractedTo}, past ${month.end} plus the ${state.lookbackDays}-day lookback`
      : `group ${groupId} is extracted to ${extractedTo}; the month closes once the extract has passed ${closesAfter} (month end plus the ${state.lookbackDays}-day lookback)`,
  };
}

export async function readClosures(
  outDir: string,
  month: ReportMonth,
  groupIds: readonly number[],
): Promise<GroupClosure[]> {
  return Promise.all(groupIds.map(async (id) => closureOf(month, id, await readOrdersState(outDir, id))));
}

/**
 * The latest month that is closed for every given group (for `perks run`), or undefined when some group has
 * no readable state or no month is closed yet. Closed ⇔ watermark > end + L ⇔ the month holds day watermark − L − 1 or earlier.
 */
export async function lastClosedMonth(outDir: string, groupIds: readonly number[]): Promise<string | undefined> {
  let last: string | undefined;
  for (const id of groupIds) {
    const state = await readOrdersState(outDir, id);
    if (state === undefined || 'error' in state || state.watermark === undefined) return undefined;
    const lastDay = addDays(state.watermark, -state.lookbackDays - 1);
    const candidate = monthContaining(lastDay);
    // lastDay may fall inside a month that is not yet over; then only the month before is closed.
    const ym = candidate.end === lastDay ? candidate.ym : monthContaining(addDays(candidate.start, -1)).ym;
    if (last === undefined || ym < last) last = ym;
  }
  return last;
}
