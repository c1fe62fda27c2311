/**
 * Windowed streams (orders by local day, redemption stats by month), per group. A window is paged
 * completely into its partition and committed atomically (a re-extracted window replaces its files);
 * the state records the window only after the commit. A pass interrupted (killed, failed) resumes and
 * skips the windows it committed; a pass that finished is finished: the next run, even the same day,
 * re-reads the lookback (late orders, refunds).
 */
import type { WindowedStream } from './define.js';
import { forEachLimit } from './pool.js';
import { pageInto } from './listing.js';
import { activityOf, type GroupInfo, type RunContext } from './run-context.js';
import { addCommit, newTally, type GroupTally } from './result.js';
import { resumes, StateWriter, type WindowState } from './state.js';
import { apiBounds, dayWindows, monthWindows, shiftDay, type Window } from './windows.js';
import { currentUsers } from './current-users.js';
import { landedValues, valueEncoder } from './activity.js';

export interface WindowPlan {
  windows: Window[];
  from: string;
  upper: string;
  skipped: number;
}

/** Which windows of a group this run extracts. */
export function planWindows(ctx: RunContext, def: WindowedStream, g: GroupInfo, state: WindowState | undefined): WindowPlan {
  const o = ctx.options;
  const lookback = ctx.config.lookbackDays;
  const defaultStart = ctx.config.startDate ?? shiftDay(g.upperDay, -90);
  const upper = o.endDate && o.endDate < g.upperDay ? o.endDate : g.upperDay;
  let from: string;
  if (o.startDate) from = o.startDate;
  else if (o.fullRefresh || !state?.watermark) from = defaultStart;
  // A watermark past the run's upper bound (a state from the future, or a clock set back): nothing to do.
  else if (state.watermark > upper) from = upper;
  else from = shiftDay(state.watermark, -lookback);
  const all = def.window.unit === 'day' ? dayWindows(from, upper, g.timezone) : monthWindows(from, upper, g.timezone).map((w) => clampEnd(w, upper, g.timezone));
  const done = resumes(state?.pass, upper, o.fullRefresh) ? new Set(state!.pass!.done) : new Set<string>();
  const windows = all.filter((w) => !done.has(w.startDay));
  return { windows, from, upper, skipped: all.length - windows.length };
}

function clampEnd(w: Window, upper: string, timezone: string): Window {
  return w.endDay > upper ? { ...w, endDay: upper, end: dayWindows(shiftDay(upper, -1), upper, timezone)[0].end } : w;
}

export async function runWindowedGroup(ctx: RunContext, def: WindowedStream, g: GroupInfo): Promise<GroupTally> {
  const tally = newTally(g.id);
  const key = String(g.id);
  const state = new StateWriter<WindowState>(ctx.state, def.name, key, (await ctx.state.read<WindowState>(def.name, key)) ?? {});
  const plan = planWindows(ctx, def, g, state.value);
  const batches = def.userBatch ? await userBatches(ctx, g, def.userBatch.size) : [undefined];
  if (!resumes(state.value.pass, plan.upper, ctx.options.fullRefresh)) state.value.pass = { upper: plan.upper, done: [] };
  ctx.emit({ event: 'plan', stream: def.name, group: g.id, windows: plan.windows.length, skipped: plan.skipped, from: plan.from, to: plan.upper });

  await forEachLimit(plan.windows, ctx.options.concurrency, async (w) => {
    const partition = { organisation_group_id: key, [def.window.partition]: w.startDay };
    const decorate = await activityTracker(ctx, def, g.id, partition, w);
    const write = await ctx.landing.open(def, partition, 'replace');
    try {
      for (const batch of batches) {
        const body = { ...def.body, ...boundsOf(def, w, ctx.config.apiTimezone), ...(batch && def.userBatch ? { [def.userBatch.valuesParam]: batch } : {}) };
        await pageInto(ctx.client, ctx.landing, def.name, write, tally, def.operation as 'listOrders', { group: g.id, body: body as never }, decorate);
      }
      addCommit(tally, await write.commit());
    } catch (err) {
      await write.abort();
      throw err;
    }
    tally.windows += 1;
    ctx.emit({ event: 'window', stream: def.name, group: g.id, window: w.startDay });
    await state.update((s) => {
      s.pass!.done.push(w.startDay);
      s.firstDay = !s.firstDay || w.startDay < s.firstDay ? w.startDay : s.firstDay;
      s.lookbackDays = ctx.config.lookbackDays;
    });
  });
  await state.update((s) => {
    if (!s.watermark || plan.upper > s.watermark) s.watermark = plan.upper;
    s.pass!.finished = true;
  });
  tally.provisional = { from: shiftDay(plan.upper, -ctx.config.lookbackDays), to: plan.upper };
  return tally;
}

function boundsOf(def: WindowedStream, w: Window, apiTimezone: string): Record<string, string> {
  if (def.window.format === 'date') return { [def.window.fromParam]: w.startDay, [def.window.toParam]: shiftDay(w.endDay, -1) };
  const { from, to } = apiBounds(w, apiTimezone);
  return { [def.window.fromParam]: from, [def.window.toParam]: to };
}

/** Redemption stats ask about users in batches: the group's current user ids. */
async function userBatches(ctx: RunContext, g: GroupInfo, size: number): Promise<string[][]> {
  const ids = (await currentUsers(ctx.outDir, g.id)).map((u) => String(u.id));
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += size) batches.push(ids.slice(i, i + size));
  return batches;
}

/**
 * Per record of a window: sets the pipeline's own columns (window_end) and marks the record's user
 * active when the record is new to the window or changed since it was last landed.
 */
async function activityTracker(ctx: RunContext, def: WindowedStream, group: number, partition: Record<string, string>, w: Window) {
  const spec = def.activity;
  const landed = spec ? await landedValues(ctx.outDir, def, partition) : new Map<string, string>();
  const encode = valueEncoder(def);
  const activity = activityOf(ctx, group);
  const key = def.key[0];
  const setsWindowEnd = 'window_end' in def.columns;
  return (r: Record<string, unknown>) => {
    if (setsWindowEnd) r.window_end = w.endDay;
    if (!spec) return;
    const before = landed.size ? landed.get(String(r[key])) : undefined;
    if (before !== undefined && before === encode(r)) return; // landed before, unchanged (encoded only then)
    const user = r[spec.userField];
    if (spec.userField === 'email' && typeof user === 'string') activity.emails.add(user.toLowerCase());
    if (spec.userField === 'id' && typeof user === 'number') activity.ids.add(user);
  };
}
