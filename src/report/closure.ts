/**
 * A group's month as the report shows it: the rule (partial, provisional, final) is src/closes/month-state.ts,
 * which the build's `month_state` column follows too; this file adds the one sentence saying why. The extract
 * re-reads the last `lookbackDays` local days on every run, so a day's orders may still change until the
 * watermark (the first local day NOT yet extracted) has moved more than `lookbackDays` past it.
 */
import { extractStateOf, readOrdersState, type ReadOrdersState } from '../closes/month-state.js';
import type { GroupClosure } from '../closes/index.js';
import { addDays, monthContaining, type ReportMonth } from './month.js';

export { OrdersState, ordersStatePath, readOrdersState } from '../closes/month-state.js';

/** The closure rule, applied to one group's state. */
export function closureOf(month: ReportMonth, groupId: number, state: ReadOrdersState): GroupClosure {
  const rule = extractStateOf(month, state);
  if (state === undefined)
    return { groupId, status: 'provisional', state: rule, reason: `no extract state for group ${groupId} yet` };
  if ('error' in state)
    return {
      groupId,
      status: 'provisional',
      state: rule,
      reason: `the extract state of group ${groupId} is unreadable: ${String(state.error)}`,
    };
  if (state.watermark === undefined)
    return {
      groupId,
      status: 'provisional',
      state: rule,
      reason: `the first extract of group ${groupId} has not finished yet`,
    };
  if (rule === 'partial') {
    return {
      groupId,
      status: 'provisional',
      state: rule,
      watermark: state.watermark,
      firstDay: state.firstDay,
      lookbackDays: state.lookbackDays,
      reason:
        `the extract of group ${groupId} starts on ${state.firstDay}, after the month's first day, ` +
        `so the month is incomplete (backfill it with \`perks extract --start-date ${month.start}\`)`,
    };
  }
  const closesAfter = addDays(month.end, state.lookbackDays);
  const closed = rule === 'final';
  const extractedTo = addDays(state.watermark, -1);
  return {
    groupId,
    status: closed ? 'closed' : 'provisional',
    state: rule,
    watermark: state.watermark,
    firstDay: state.firstDay,
    lookbackDays: state.lookbackDays,
    closesAfter,
    reason: closed
      ? `group ${groupId} is extracted to ${extractedTo}, past ${month.end} plus the ${state.lookbackDays}-day lookback`
      : `group ${groupId} is extracted to ${extractedTo}; ` +
        `the month is final once the extract has passed ${closesAfter} (month end plus the ${state.lookbackDays}-day lookback)`,
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
 * The latest month that is final for every given group (for `perks run`), or undefined when some group has
 * no readable state or no month is final yet. Final ⇔ watermark > end + L ⇔ the month holds day watermark − L − 1
 * or earlier. (Final is the data's word; a month is signed off only by `perks close`.)
 */
export async function lastFinalMonth(outDir: string, groupIds: readonly number[]): Promise<string | undefined> {
  let last: string | undefined;
  for (const id of groupIds) {
    const state = await readOrdersState(outDir, id);
    if (state === undefined || 'error' in state || state.watermark === undefined) return undefined;
    const lastDay = addDays(state.watermark, -state.lookbackDays - 1);
    const candidate = monthContaining(lastDay);
    // lastDay may fall inside a month that is not yet over; then only the month before is final.
    const ym = candidate.end === lastDay ? candidate.ym : monthContaining(addDays(candidate.start, -1)).ym;
    if (last === undefined || ym < last) last = ym;
  }
  return last;
}
