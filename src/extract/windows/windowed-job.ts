/**
 * Windowed streams (orders by local day, redemption stats by month), per group. A window is paged
 * completely into its partition and committed atomically (a re-extracted window replaces its files);
 * the state records the window only after the commit. A pass interrupted (killed, failed) resumes and
 * skips the windows it committed; a pass that finished is finished: the next run, even the same day,
 * re-reads the lookback (late orders, refunds).
 */
import { relative } from 'node:path';
import type { WindowedStream } from '../../../pipelines/index.js';
import { damagedFiles, monthFileDays, partitionsOf, streamDir } from '../../lake/index.js';
import { rm } from 'node:fs/promises';
import { isRealDay } from '../../shared/checks.js';
import { forEachLimit } from '../pool.js';
import type { GroupInfo, RunContext } from '../run-context.js';
import { newTally, type GroupTally } from '../result.js';
import { FutureWatermarkError, resumes, StateWriter, WindowStateSchema, type WindowState } from '../state.js';
import { dayWindows, monthWindows, shiftDay, type Window } from '../date-windows.js';
import { currentUsers } from '../per-user/current-users.js';
import { judgeMonth, settledMonth, weigherOf, type Weigher } from './settled-guard.js';
import { commitWindow, dropWindow, readWindow, type ReadWindow } from './window-read.js';

export interface WindowPlan {
  windows: Window[];
  from: string;
  upper: string;
  skipped: number;
  /** This pass re-reads the open and previous month whole (a deep re-read). */
  deep: boolean;
  /** Of `windows`, those the deep re-read adds to the lookback's (its cost). */
  deepWindows: number;
  /** The first upper bound at which a later pass will be a deep re-read (the setting on; after this pass). */
  nextDeep?: string;
  /** Windows outside the range planned again because their lake file is damaged. */
  healing?: string[];
  /** Damaged compacted month files whose days are planned again: removed once every window succeeded. */
  damagedMonths?: string[];
}

/** First day of the month before the one holding `day`. */
function previousMonthStart(day: string): string {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - 1);
  return d.toISOString().slice(0, 10);
}

/** Which windows of a group this run extracts. */
export function planWindows(
  ctx: RunContext,
  def: WindowedStream,
  g: GroupInfo,
  state: WindowState | undefined,
): WindowPlan {
  const o = ctx.options;
  const upper = o.endDate && o.endDate < g.upperDay ? o.endDate : g.upperDay;
  const lookbackFrom = passStart(ctx, def, g, state, upper);
  const every = ctx.config.deepRereadDays ?? 0;
  const deep = isDeepPass(ctx, def, state, upper);
  const from = deep
    ? minDay(lookbackFrom, maxDay(previousMonthStart(upper), state!.firstDay ?? previousMonthStart(upper)))
    : lookbackFrom;
  const all =
    def.window.unit === 'day'
      ? dayWindows(from, upper, g.timezone)
      : monthWindows(from, upper, g.timezone).map((w) => clampEnd(w, upper, g.timezone));
  const done = resumes(state?.pass, upper, o.fullRefresh) ? new Set(state!.pass!.done) : new Set<string>();
  const windows = all.filter((w) => !done.has(w.startDay));
  const deepWindows = deep ? windows.filter((w) => w.startDay < lookbackFrom).length : 0;
  const nextDeep =
    every > 0 && def.window.unit === 'day' ? shiftDay(deep || !state?.deepAt ? upper : state.deepAt, every) : undefined;
  const { healing, damagedMonths } = damagedToHeal(ctx, def, g, upper, all);
  return {
    windows: [...healing, ...windows],
    from,
    upper,
    skipped: all.length - windows.length,
    healing: healing.map((w) => w.startDay),
    deep,
    deepWindows,
    ...(nextDeep ? { nextDeep } : {}),
    damagedMonths,
  };
}

/** Where an ordinary pass starts: the given start, the default start, or the watermark less the lookback. */
function passStart(
  ctx: RunContext,
  def: WindowedStream,
  g: GroupInfo,
  state: WindowState | undefined,
  upper: string,
): string {
  const o = ctx.options;
  if (o.startDate) return o.startDate;
  if (o.fullRefresh || !state?.watermark) return ctx.config.startDate ?? shiftDay(g.upperDay, -90);
  // A watermark beyond tomorrow (a clock set back, a copied state) would extract nothing, run after run,
  // with exit 0: refused instead, naming the fixes. Up to tomorrow (another zone's today) is nothing to do.
  if (state.watermark > shiftDay(g.upperDay, 1))
    throw new FutureWatermarkError(
      ctx.state.fileOf?.(def.name, String(g.id)) ?? `${def.name}/${g.id}.json`,
      state.watermark,
      g.upperDay,
    );
  return state.watermark > upper ? upper : shiftDay(state.watermark, -ctx.config.lookbackDays);
}

/**
 * A deep re-read every deepRereadDays (default 7): the open and the previous month whole, for refunds later
 * than the lookback. Counted from the last deep pass's upper bound (`deepAt`); a state without one (the first
 * pass, or one from before the setting) starts counting, so a daily schedule pays it once every N days.
 * It re-reads only days the extract has read before (from the state's firstDay): a history that starts
 * mid-month (PERKS_START_DATE) is not backfilled by it behind the operator's back (the month stays
 * incomplete, and the report says how to backfill it: `perks extract --start-date`).
 */
function isDeepPass(ctx: RunContext, def: WindowedStream, state: WindowState | undefined, upper: string): boolean {
  const o = ctx.options;
  const every = ctx.config.deepRereadDays ?? 0;
  const ordinary = !o.startDate && !o.endDate && !o.fullRefresh;
  return (
    every > 0 &&
    def.window.unit === 'day' &&
    ordinary &&
    !!state?.watermark &&
    !!state.deepAt &&
    shiftDay(state.deepAt, every) <= upper
  );
}

/**
 * A damaged lake file is healed by the next run, whatever its age: its window is extracted again. A damaged
 * compacted month file: its days land again as day files (lake-landing.ts merges into no damaged file), and
 * once every window succeeded it goes; a kill before that leaves it, and the next run repeats.
 */
function damagedToHeal(ctx: RunContext, def: WindowedStream, g: GroupInfo, upper: string, all: Window[]) {
  const planned = new Set(all.map((w) => w.startDay));
  const damaged = damagedFiles(streamDir(ctx.output.dir, def.name, g.id));
  const healing = damagedWindows(damaged, def, g, upper).filter((w) => !planned.has(w.startDay));
  const damagedMonths =
    def.window.unit === 'day' ? damaged.filter((f) => monthFileDays(f)?.every((d) => d < upper)) : [];
  return { healing, damagedMonths };
}

/** The windows (before `upper`) of the group whose lake file is damaged (src/lake/damaged.ts); a month file's: each day it covers. */
function damagedWindows(damaged: string[], def: WindowedStream, g: GroupInfo, upper: string): Window[] {
  const days = damaged
    .flatMap(
      (f) => (def.window.unit === 'day' ? monthFileDays(f) : undefined) ?? [partitionsOf(f)[def.window.partition]],
    )
    .filter((d): d is string => d !== undefined && isRealDay(d) && d < upper);
  return [...new Set(days)].sort().flatMap((d) =>
    def.window.unit === 'day'
      ? dayWindows(d, shiftDay(d, 1), g.timezone)
      : monthWindows(d, minDay(firstOfNextMonth(d), upper), g.timezone)
          .slice(0, 1)
          .map((w) => clampEnd(w, upper, g.timezone)),
  );
}

const minDay = (a: string, b: string) => (a < b ? a : b);
const maxDay = (a: string, b: string) => (a > b ? a : b);
function firstOfNextMonth(day: string): string {
  const [y, m] = day.split('-').map(Number);
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

function clampEnd(w: Window, upper: string, timezone: string): Window {
  return w.endDay > upper ? { ...w, endDay: upper, end: dayWindows(shiftDay(upper, -1), upper, timezone)[0].end } : w;
}

export async function runWindowedGroup(ctx: RunContext, def: WindowedStream, g: GroupInfo): Promise<GroupTally> {
  const tally = newTally(g.id);
  const key = String(g.id);
  const state = new StateWriter<WindowState>(
    ctx.state,
    def.name,
    key,
    (await ctx.state.read(def.name, key, WindowStateSchema)) ?? {},
  );
  const plan = planWindows(ctx, def, g, state.value);
  const batches = def.userBatch ? await userBatches(ctx, g, def.userBatch.size) : [undefined];
  if (!resumes(state.value.pass, plan.upper, ctx.options.fullRefresh))
    state.value.pass = { upper: plan.upper, done: [] };
  ctx.emit({
    event: 'plan',
    stream: def.name,
    group: g.id,
    windows: plan.windows.length,
    skipped: plan.skipped,
    from: plan.from,
    to: plan.upper,
  });
  if (plan.healing?.length)
    tally.notes.push(
      `re-extracting ${plan.healing.length} window${plan.healing.length === 1 ? '' : 's'} whose lake file was damaged: ${plan.healing.join(', ')}`,
    );

  const { free, weighed } = splitWeighed(ctx, def, plan.windows, state.value);
  await forEachLimit(free, ctx.options.concurrency, async (w) =>
    commitWindow(ctx, def, g, await readWindow(ctx, def, g, w, batches, tally), state, tally),
  );
  for (const [month, windows] of weighed)
    await weighedMonth(ctx, def, g, { month, windows, batches, state, tally, settled: windows.settled });
  for (const file of plan.damagedMonths ?? []) await rm(file, { force: true });
  if (plan.damagedMonths?.length)
    tally.notes.push(
      `removed ${plan.damagedMonths.length} damaged month file${plan.damagedMonths.length === 1 ? '' : 's'}, ` +
        `its days landed again: ${plan.damagedMonths.map((f) => relative(ctx.output.dir, f)).join(', ')}`,
    );
  await state.update((s) => {
    // a watermark beyond tomorrow is only ever here on --full-refresh / --start-date: this pass replaces it
    if (!s.watermark || plan.upper > s.watermark || s.watermark > shiftDay(g.upperDay, 1)) s.watermark = plan.upper;
    // The deep re-read's clock: moved by a deep pass; started (or restarted by a full refresh, which re-read
    // everything) by an ordinary pass of the whole range; never by a --start-date / --end-date pass (a close's re-read).
    const counts =
      (ctx.config.deepRereadDays ?? 0) > 0 &&
      def.window.unit === 'day' &&
      !ctx.options.startDate &&
      !ctx.options.endDate;
    if (plan.deep || (counts && (!s.deepAt || ctx.options.fullRefresh))) s.deepAt = plan.upper;
    s.pass!.finished = true;
  });
  tally.provisional = { from: shiftDay(plan.upper, -ctx.config.lookbackDays), to: plan.upper };
  return tally;
}

/** Redemption stats ask about users in batches: the group's current user ids. */
async function userBatches(ctx: RunContext, g: GroupInfo, size: number): Promise<string[][]> {
  const ids = (await currentUsers(ctx.output.dir, g.id)).map((u) => String(u.id));
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += size) batches.push(ids.slice(i, i + size));
  return batches;
}

/** A month the guard weighs: its windows, and whether it was final before the pass. */
type MonthWindows = Window[] & { settled: boolean };

/**
 * The windows the guard does not weigh (`free`: each committed as soon as it is read), and per month those it
 * weighs: every window of a month final before this pass (a stream with a guard), or of every month (`guardMonths:
 * all`, the re-read before a close).
 */
function splitWeighed(ctx: RunContext, def: WindowedStream, windows: Window[], state: WindowState) {
  const free: Window[] = [];
  const weighed = new Map<string, MonthWindows>();
  const all = ctx.options.guardMonths === 'all';
  for (const w of windows) {
    const month = w.startDay.slice(0, 7);
    const settled = settledMonth(month, state, ctx.config.lookbackDays);
    if (!def.guard || def.window.unit !== 'day' || !(settled || all)) {
      free.push(w);
      continue;
    }
    let mine = weighed.get(month);
    if (!mine) weighed.set(month, (mine = Object.assign([] as Window[], { settled })));
    mine.push(w);
  }
  return { free, weighed };
}

/**
 * A weighed month: every window read first, the month judged (settled-guard.ts), then every window committed,
 * or (held) every one dropped: the lake, the state and the history keep the month as it was.
 */
async function weighedMonth(
  ctx: RunContext,
  def: WindowedStream,
  g: GroupInfo,
  m: {
    month: string;
    windows: Window[];
    settled: boolean;
    batches: (string[] | undefined)[];
    state: StateWriter<WindowState>;
    tally: GroupTally;
  },
): Promise<void> {
  const weigh = weigherOf(def, ctx.config.revenueStatuses) as Weigher;
  const reads: ReadWindow[] = [];
  try {
    await forEachLimit(m.windows, ctx.options.concurrency, async (w) => {
      reads.push(await readWindow(ctx, def, g, w, m.batches, m.tally, weigh));
    });
  } catch (err) {
    for (const r of reads) await dropWindow(r, m.tally);
    throw err;
  }
  const change = judgeMonth(
    m.month,
    m.windows,
    reads.map((r) => r.weighed!),
    { settled: m.settled, accept: ctx.options.acceptChanges === true },
  );
  (m.tally.months ??= []).push(change);
  if (change.outcome === 'held') {
    for (const r of reads) await dropWindow(r, m.tally);
    ctx.emit({ event: 'warning', stream: def.name, group: g.id, message: `${m.month} held: ${change.breach}` });
    return;
  }
  const committed = new Set<ReadWindow>();
  try {
    await forEachLimit(reads, ctx.options.concurrency, async (r) => {
      committed.add(r); // a failed commit drops its own write
      await commitWindow(ctx, def, g, r, m.state, m.tally);
    });
  } catch (err) {
    for (const r of reads) if (!committed.has(r)) await dropWindow(r, m.tally);
    throw err;
  }
}
