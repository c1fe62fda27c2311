/**
 * `perks extract --plan`: what a run of this worker (its `--shard`, its `--groups`) would do, per stream
 * and group, without extracting: windows (or users), estimated calls, and the time they take at the
 * current rate limit. Snapshot sizes are estimated from the lake's latest snapshot (one page when there
 * is none). Users come from the lake's latest users snapshot; for a group with none landed yet, from
 * the first page of the users listing (user-estimate.ts). The plan names the calls it made: resolving
 * the groups, and those first pages.
 */
import { globUnder, scanSql, streamDir, withLakeConnection } from '../../lake/index.js';
import { operations, type OperationName } from '../../resources/operations.js';
import type { PerUserStream, StreamDefinition, WindowedStream } from '../../../pipelines/index.js';
import { hasParquet } from '../landing/lake-files.js';
import type { RunContext } from '../run-context.js';
import { WindowStateSchema } from '../state.js';
import { planWindows } from '../windows/windowed-job.js';
import { landedElsewhere, perUserBudgets, pickUsers, startingState, workerScope } from '../per-user/worker-share.js';
import { userEstimates, type UserEstimate } from './user-estimate.js';
import { rankText } from '../per-user/user-selection.js';
import type { GroupInfo } from '../run-context.js';

export interface PlanRow {
  stream: string;
  group?: number;
  /** Windows (windowed), users (per-user) or 1 (snapshot). */
  units: number;
  unit: 'windows' | 'users' | 'snapshot';
  estimatedCalls: number;
  detail: string;
}

/** What one worker would do: its scope in words, a row per stream and group, and the streams it leaves to others. */
export interface Plan {
  /** Which worker: its shard and groups, in words. */
  scope: string;
  rows: PlanRow[];
  elsewhere: { stream: string; reason: string }[];
  /** The calls made to plan (besides the token): the groups' resolution, the users listings' first pages. */
  calls: { path: string; calls: number }[];
  /** Groups with no users landed yet, whose users were counted by the users listing. */
  usersFromListing: number[];
}

/** `callsBefore`: the client's calls per operation before the run resolved its groups. */
export async function planExtract(
  ctx: RunContext,
  streams: readonly StreamDefinition[],
  callsBefore: Record<string, number> = {},
): Promise<Plan> {
  const plan: Plan = { scope: workerScope(ctx), rows: [], elsewhere: [], calls: [], usersFromListing: [] };
  const estimates = userEstimates(ctx.client, ctx.output.dir);
  const usersOf = async (group: number) => {
    const e = await estimates(group);
    if (e.source !== 'lake' && !plan.usersFromListing.includes(group)) plan.usersFromListing.push(group);
    return e;
  };
  const budgets: Record<string, Map<number, number>> = {};
  for (const def of streams) {
    const reason = landedElsewhere(ctx, def);
    if (reason) {
      plan.elsewhere.push({ stream: def.name, reason });
      continue;
    }
    const groups = def.scope === 'organisation' && def.name !== 'groups' ? [undefined] : ctx.groups;
    for (const g of groups) {
      if (def.kind === 'snapshot') plan.rows.push(await snapshotRow(ctx, def, g, usersOf));
      else if (def.kind === 'windowed' && g) plan.rows.push(await windowedRow(ctx, def, g, usersOf));
      else if (def.kind === 'per-user' && g) {
        budgets[def.name] ??= await perUserBudgets(ctx, def, async (group) => (await usersOf(group)).users);
        plan.rows.push(await perUserRow(ctx, def, g, budgets[def.name].get(g.id) ?? 0, await usersOf(g.id)));
      }
    }
  }
  plan.calls = callsSince(ctx, callsBefore);
  return plan;
}

type UsersOf = (group: number) => Promise<UserEstimate>;

/** A snapshot: one per group (or organisation), its calls from the rows it had last time (or the users listing). */
async function snapshotRow(
  ctx: RunContext,
  def: StreamDefinition,
  g: GroupInfo | undefined,
  usersOf: UsersOf,
): Promise<PlanRow> {
  const row = { stream: def.name, group: g?.id, units: 1, unit: 'snapshot' } as const;
  // The groups were read when the run resolved them: that call is among the plan's calls.
  if (def.name === 'groups') return { ...row, estimatedCalls: 0, detail: 'read while resolving the groups' };
  let last = await lastSnapshotRows(ctx.output.dir, def.name, g?.id);
  let detail = `${last} rows last time`;
  const e = def.name === 'users' && g && last === 0 ? await usersOf(g.id) : undefined;
  if (e && e.source !== 'lake') [last, detail] = [e.users, `${usersText(e)} by the users listing (none landed yet)`];
  return { ...row, estimatedCalls: Math.max(1, Math.ceil(last / 100)), detail };
}

/** A windowed stream of a group: the windows this run extracts (planWindows), each a call per batch of users. */
async function windowedRow(ctx: RunContext, def: WindowedStream, g: GroupInfo, usersOf: UsersOf): Promise<PlanRow> {
  if (g.timezoneError)
    return {
      stream: def.name,
      group: g.id,
      units: 0,
      unit: 'windows',
      estimatedCalls: 0,
      detail: `${g.timezoneError}: the run fails this group's windows`,
    };
  const windows = planWindows(ctx, def, g, await ctx.state.read(def.name, String(g.id), WindowStateSchema));
  const batches = def.userBatch ? Math.ceil((await usersOf(g.id)).users / def.userBatch.size) : 1;
  return {
    stream: def.name,
    group: g.id,
    units: windows.windows.length,
    unit: 'windows',
    estimatedCalls: windows.windows.length * batches,
    detail: `${windows.from} to ${windows.upper} (exclusive), ${windows.skipped} already done${deepText(windows, batches)}`,
  };
}

/**
 * The same state, shard, budget and selection as the run (worker-share.ts); the users active in this
 * run's windows are known only once the windows are landed. With no users landed yet, every user of
 * the listing is new: one call each, as many as the budget allows.
 */
async function perUserRow(
  ctx: RunContext,
  def: PerUserStream,
  g: GroupInfo,
  budget: number,
  e: UserEstimate,
): Promise<PlanRow> {
  if (e.source === 'lake') {
    const { selection: s } = await pickUsers(ctx, def, g, await startingState(ctx, def, g), budget);
    return {
      stream: def.name,
      group: g.id,
      units: s.users.length,
      unit: 'users',
      estimatedCalls: s.users.length,
      detail:
        `by rank, served/waiting: ${rankText(s.counts, s.waiting)}` +
        `${def.refreshActiveUsers ? '; plus the users of new windows (credit_order, active)' : ''}`,
    };
  }
  const mine = Math.round(e.users / (ctx.options.shard?.count ?? 1));
  const units = Math.min(mine, budget);
  const share = ctx.options.shard ? `about 1/${ctx.options.shard.count} of ${usersText(e)}` : usersText(e);
  return {
    stream: def.name,
    group: g.id,
    units,
    unit: 'users',
    estimatedCalls: units,
    detail: `all new: ${share} by the users listing (none landed yet), ${mine - units} deferred`,
  };
}

const usersText = (e: UserEstimate) => `${e.source === 'at-least' ? 'at least ' : ''}${e.users} users`;

/** The calls the client made since `before`, by path (the token request aside). */
function callsSince(ctx: RunContext, before: Record<string, number>): Plan['calls'] {
  const now = ctx.client.counters.snapshot().callsByOperation;
  return Object.entries(now)
    .filter(([op, n]) => op !== 'token' && n > (before[op] ?? 0))
    .map(([op, n]) => ({ path: operations[op as OperationName]?.path ?? op, calls: n - (before[op] ?? 0) }));
}

async function lastSnapshotRows(outDir: string, stream: string, group?: number): Promise<number> {
  const dir = streamDir(outDir, stream, group);
  if (!hasParquet(dir)) return 0;
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `WITH s AS (SELECT _snapshot_date::VARCHAR AS d FROM ${scanSql('$glob')})
       SELECT count(*)::BIGINT AS n FROM s WHERE d = (SELECT max(d) FROM s)`,
      { glob: globUnder(dir, '**', '*.parquet') },
    );
    return Number(r.getRowObjectsJS()[0]?.n ?? 0);
  });
}

export function formatPlan(plan: Plan, callsPerMinute: number): string {
  const calls = plan.calls.map((c) => `${c.path} (${c.calls})`).join(', ') || 'none';
  const lines = [`plan for ${plan.scope}, nothing extracted; calls made to plan it: ${calls}`];
  for (const r of plan.rows) {
    lines.push(
      `  ${r.stream.padEnd(17)} group ${String(r.group ?? '-').padEnd(6)} ${String(r.units).padStart(6)} ` +
        `${r.unit.padEnd(8)} ~${String(r.estimatedCalls).padStart(7)} calls  ${r.detail}`,
    );
  }
  for (const e of plan.elsewhere) lines.push(`  ${e.stream.padEnd(17)} not here: ${e.reason}`);
  if (plan.usersFromListing.length) {
    const groups = plan.usersFromListing.join(', ');
    lines.push(
      `  users of group${plan.usersFromListing.length === 1 ? '' : 's'} ${groups}: none landed yet, ` +
        `estimated from the first page of /v3/user/list (its total); one call per user assumed`,
    );
  }
  const total = plan.rows.reduce((n, r) => n + r.estimatedCalls, 0);
  lines.push(
    `  total ~${total} calls: about ${(total / callsPerMinute).toFixed(1)} minutes at ${Math.floor(callsPerMinute)} calls/min`,
  );
  return `${lines.join('\n')}\n`;
}

/** The deep re-read's part of a windowed row: its cost when this pass is one, else when the next one comes. */
function deepText(w: { deep: boolean; deepWindows: number; nextDeep?: string }, batches: number): string {
  if (w.deep)
    return (
      `, a deep re-read of the open and previous month (PERKS_DEEP_REREAD_DAYS): ${w.deepWindows} windows, ` +
      `~${w.deepWindows * batches} calls more than the lookback`
    );
  return w.nextDeep ? `; next deep re-read from ${w.nextDeep}` : '';
}
