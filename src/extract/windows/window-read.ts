/**
 * One window of a group in two steps: read (every batch's pages into an uncommitted write, the lake's records
 * of the window beside them), then committed (its history, file and state as one unit) or dropped. A window of
 * a month the settled-change guard weighs waits, read, until its whole month is (settled-guard.ts).
 */
import type { WindowedStream } from '../../../pipelines/index.js';
import { crashPoint } from '../../shared/crash-points.js';
import { apiBounds, shiftDay, type Window } from '../date-windows.js';
import type { PartitionWrite } from '../landing/landing.js';
import { pageInto } from '../landing/listing.js';
import { addCommit, type GroupTally } from '../result.js';
import {
  activityOf,
  mergeActivity,
  newActivity,
  type Activity,
  type GroupInfo,
  type RunContext,
} from '../run-context.js';
import type { StateWriter, WindowState } from '../state.js';
import { keyDecoder, landedValues, valueEncoder } from './activity.js';
import { weighWindow, type Weighed, type Weigher } from './settled-guard.js';

/** A window paged whole, not committed yet. */
export interface ReadWindow {
  readonly w: Window;
  readonly partition: Record<string, string>;
  readonly write: PartitionWrite;
  /** Its versions for the history: records new or changed, and a tombstone per record no longer listed. */
  readonly versions: Record<string, unknown>[];
  /** The users it marks active, for the per-user streams (counted once it is committed). */
  readonly activity: Activity;
  /** Records listed and the listings' own count, as pageInto added them to the tally. */
  readonly rows: number;
  readonly total?: number;
  /** The lake's records against the API's, when the window's month is weighed. */
  readonly weighed?: Weighed;
}

/** Pages every batch of the window into a write it leaves open; `weigh`: the window is weighed too. */
export async function readWindow(
  ctx: RunContext,
  def: WindowedStream,
  g: GroupInfo,
  w: Window,
  batches: readonly (string[] | undefined)[],
  tally: GroupTally,
  weigh?: Weigher,
): Promise<ReadWindow> {
  const partition = { organisation_group_id: String(g.id), [def.window.partition]: w.startDay };
  const tracker = await activityTracker(ctx, def, partition, w, weigh !== undefined);
  const write = await ctx.landing.open(def, partition, 'replace');
  let rows = 0;
  let total: number | undefined;
  try {
    for (const batch of batches) {
      const body = {
        ...def.body,
        ...boundsOf(def, w, ctx.config.apiTimezone),
        ...(batch && def.userBatch ? { [def.userBatch.valuesParam]: batch } : {}),
      };
      const paged = await pageInto(
        ctx.client,
        ctx.landing,
        def.name,
        write,
        tally,
        def.operation as 'listOrders',
        { group: g.id, body: body },
        tracker.decorate,
      );
      rows += paged.records;
      if (paged.total !== undefined) total = (total ?? 0) + paged.total;
    }
  } catch (err) {
    await write.abort();
    throw err;
  }
  return {
    w,
    partition,
    write,
    versions: [...tracker.versions, ...tracker.removed()],
    activity: tracker.activity,
    rows,
    ...(total !== undefined ? { total } : {}),
    ...(weigh ? { weighed: weighWindow(weigh, tracker.landed, tracker.listed) } : {}),
  };
}

/** The window's history, file and state committed as one unit; its users count as active from then on. */
export async function commitWindow(
  ctx: RunContext,
  def: WindowedStream,
  g: GroupInfo,
  read: ReadWindow,
  state: StateWriter<WindowState>,
  tally: GroupTally,
): Promise<void> {
  const { w } = read;
  try {
    // One unit: the history first (a crash before the window's commit loses no version: see landVersions),
    // the window, then the state that names it.
    await ctx.durably(async () => {
      await landVersions(ctx, def, read.partition, read.versions);
      addCommit(tally, await read.write.commit());
      await state.update((s) => {
        s.pass!.done.push(w.startDay);
        s.firstDay = !s.firstDay || w.startDay < s.firstDay ? w.startDay : s.firstDay;
        s.lookbackDays = ctx.config.lookbackDays;
      });
    });
  } catch (err) {
    await read.write.abort();
    throw err;
  }
  mergeActivity(activityOf(ctx, g.id), read.activity);
  tally.windows += 1;
  ctx.emit({ event: 'window', stream: def.name, group: g.id, window: w.startDay });
}

/** A window read and not applied: its write dropped, its rows taken back out of the tally. */
export async function dropWindow(read: ReadWindow, tally: GroupTally): Promise<void> {
  await read.write.abort();
  tally.rows -= read.rows;
  if (read.total !== undefined && tally.expected !== undefined) tally.expected -= read.total;
}

/**
 * The new or changed records of a window, appended to the stream's history (see `history` in define.ts).
 * Written BEFORE the window is committed: a crash in between leaves versions the API did show (observations)
 * and the old window, which the next run reads again and finds changed again (the same values seen twice
 * in a row are one version). Written after, a crash in between would leave the new window without its
 * versions, and the next run, comparing with that window, would never see the change (no adjustment).
 */
async function landVersions(
  ctx: RunContext,
  def: WindowedStream,
  partition: Record<string, string>,
  versions: Record<string, unknown>[],
): Promise<void> {
  if (!def.history || versions.length === 0) return;
  const history = {
    ...def,
    name: def.history.stream,
    record: def.history.record,
    columns: HISTORY_COLUMNS,
  } as unknown as WindowedStream;
  const write = await ctx.landing.open(history, partition, 'append');
  try {
    await write.append(versions);
    await write.commit();
    crashPoint('after-history');
  } catch (err) {
    await write.abort();
    throw err;
  }
}

/** The history's own column: true on an observation that a record is no longer listed (a tombstone). */
const HISTORY_COLUMNS = { is_removed: 'BOOLEAN' };

function boundsOf(def: WindowedStream, w: Window, apiTimezone: string): Record<string, string> {
  if (def.window.format === 'date')
    return { [def.window.fromParam]: w.startDay, [def.window.toParam]: shiftDay(w.endDay, -1) };
  const { from, to } = apiBounds(w, apiTimezone);
  return { [def.window.fromParam]: from, [def.window.toParam]: to };
}

/**
 * Per record of a window: sets the pipeline's own columns (window_end) and marks the record's user
 * active when the record is new to the window or changed since it was last landed. `removed` (once the window
 * is read whole) gives, for a stream with a history, a tombstone per record the window held and no longer
 * lists: its key, null values and is_removed (a closed month's order gone from the API is an adjustment).
 * `weighing`: every record's compared values are kept (`listed`), for the guard.
 */
async function activityTracker(
  ctx: RunContext,
  def: WindowedStream,
  partition: Record<string, string>,
  w: Window,
  weighing: boolean,
) {
  const spec = def.activity;
  const landed = spec ? await landedValues(ctx.output.dir, def, partition) : new Map<string, string>();
  const encode = valueEncoder(def);
  const activity = newActivity();
  const versions: Record<string, unknown>[] = [];
  const key = def.key[0];
  const setsWindowEnd = 'window_end' in def.columns;
  const listed = new Map<string, string | undefined>();
  const keyOf = keyDecoder(def);
  const removed = () =>
    def.history
      ? [...landed.keys()]
          .filter((k) => !listed.has(k))
          .map((k) => ({
            ...Object.fromEntries(Object.keys(def.history!.record.shape).map((f) => [f, null])),
            [key]: keyOf(k),
            is_removed: true,
          }))
      : [];
  const decorate = (r: Record<string, unknown>) => {
    if (setsWindowEnd) r.window_end = w.endDay;
    if (!spec) return;
    const before = landed.size ? landed.get(String(r[key])) : undefined;
    // encoded only when there is something to compare it with, or the guard weighs it
    const now = before !== undefined || weighing ? encode(r) : undefined;
    if (landed.size || weighing) listed.set(String(r[key]), now);
    if (before !== undefined && before === now) return; // landed before, unchanged
    if (def.history)
      versions.push({
        ...undeclaredOf(def, r), // the history's _extra: what the version carried beyond the declaration
        ...Object.fromEntries(Object.keys(def.history.record.shape).map((f) => [f, r[f] ?? null])),
        is_removed: false,
      });
    const user = r[spec.userField];
    const bears =
      spec.bearing !== undefined &&
      (Number(r[spec.bearing.amount] ?? 0) > 0 || spec.bearing.statuses.includes(String(r[spec.bearing.status])));
    for (const into of bears ? [activity, activity.credit] : [activity]) {
      if (spec.userField === 'email' && typeof user === 'string') into.emails.add(user.toLowerCase());
      if (spec.userField === 'id' && typeof user === 'number') into.ids.add(user);
    }
  };
  return { decorate, removed, versions, activity, landed, listed };
}

/** The keys of a record its stream does not declare (nor sets itself), with their values. */
function undeclaredOf(def: WindowedStream, r: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const k in r) if (!(k in def.record.shape) && !(k in def.columns)) (out ??= {})[k] = r[k];
  return out ?? {};
}
