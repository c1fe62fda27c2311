/**
 * A worker's share of the round (`--shard K/N`, `--groups`): which streams it lands, which users of a
 * per-user stream it refreshes and with what call budget. The run and `--plan` both ask here, so the
 * plan is exactly the work the worker would do.
 */
import { currentUsers } from './current-users.js';
import type { PerUserStream, StreamDefinition } from '../../pipelines/index.js';
import { activityOf, type GroupInfo, type RunContext } from './run-context.js';
import { inShard, landsSharedStreams, readPerUserState, shardLabel } from './shard.js';
import { resumes, type PerUserState } from './state.js';
import { selectUsers, type CurrentUser, type Selection } from './user-selection.js';
import { describeScope } from './work-lock.js';
import { userChangesOf } from './user-changes.js';

/** Who this worker is, in words: "the whole organisation (groups 11, 12)", "shard 2/4 of groups 11, 12"… */
export function workerScope(ctx: RunContext): string {
  const ids = ctx.groups.map((g) => g.id);
  const scope = describeScope({ groups: ctx.options.groupSlice ? ids : undefined, shard: ctx.options.shard });
  return ctx.options.groupSlice ? scope : `${scope} (group${ids.length === 1 ? '' : 's'} ${ids.join(', ')})`;
}

/**
 * A worker that is one of several lands only its share: shards 2..N only the per-user streams, and
 * the organisation-wide streams (offers) only the worker holding the organisation's lowest group id.
 * Why a stream is not landed here, or undefined when it is.
 */
export function landedElsewhere(ctx: RunContext, def: StreamDefinition): string | undefined {
  const shard = ctx.options.shard;
  if (def.kind !== 'per-user' && !landsSharedStreams(shard))
    return `landed by shard 1/${shard!.count} (this is shard ${shardLabel(shard!)})`;
  if (def.kind === 'snapshot' && def.scope === 'organisation' && def.name !== 'groups' && !ctx.leadsOrganisation) {
    return 'organisation-wide: landed by the --groups worker holding the lowest group id';
  }
  return undefined;
}

/**
 * Splits the per-user call budget: half per per-user stream, and the N shards of a round (one
 * credential's rate) 1/N each. Users with a signal (changed, new, active: user-selection.ts) come
 * first across groups: each group gets what its signals need, then the rest by its share of users, so
 * a tight budget is spent on what the data shows changed, wherever it is. Without `def` (or when the
 * signals alone exceed the budget) the split is by share of users, resp. of signals.
 */
export async function perUserBudgets(
  ctx: RunContext,
  def?: PerUserStream,
  usersOf?: (group: number) => Promise<number>,
): Promise<Map<number, number>> {
  const perStream = Math.floor(
    (ctx.options.budgetMinutes * ctx.client.limiter.currentRate) / 2 / (ctx.options.shard?.count ?? 1),
  );
  // The run counts the landed users; --plan may estimate a group's users from the listing (user-estimate.ts).
  const count = usersOf ?? (async (group: number) => (await currentUsers(ctx.outDir, group)).length);
  const counts = await Promise.all(ctx.groups.map(async (g) => [g.id, await count(g.id)] as const));
  const signals = new Map<number, number>();
  if (def) {
    for (const g of ctx.groups) {
      const { selection } = await pickUsers(ctx, def, g, await startingState(ctx, def, g), Number.MAX_SAFE_INTEGER);
      signals.set(g.id, selection.counts.changed + selection.counts.new + selection.counts.active);
    }
  }
  const need = [...signals.values()].reduce((n, c) => n + c, 0);
  const share = (pool: number, weights: readonly (readonly [number, number])[]) => {
    const total = weights.reduce((n, [, c]) => n + c, 0) || 1;
    return new Map(weights.map(([id, c]) => [id, Math.ceil((pool * c) / total)]));
  };
  if (need >= perStream && need > 0) return share(perStream, [...signals]);
  const rest = share(perStream - need, counts);
  return new Map(counts.map(([id]) => [id, (signals.get(id) ?? 0) + (rest.get(id) ?? 0)]));
}

/**
 * The group's per-user state as this run starts from it: every shard's refreshes of this worker's
 * users (shard.ts), none with --full-refresh, and a new pass unless an interrupted one resumes.
 */
export async function startingState(ctx: RunContext, def: PerUserStream, g: GroupInfo): Promise<PerUserState> {
  const state = await readPerUserState(
    { outDir: ctx.outDir, state: ctx.state, shard: ctx.options.shard },
    def.name,
    g.id,
  );
  if (ctx.options.fullRefresh) state.users = {};
  const upper = ctx.now.toISOString().slice(0, 10);
  if (!resumes(state.pass, upper, ctx.options.fullRefresh)) state.pass = { upper, done: [] };
  return state;
}

/** This worker's users of the group (its shard's) and those it refreshes this run (user-selection.ts). */
export async function pickUsers(
  ctx: RunContext,
  def: PerUserStream,
  g: GroupInfo,
  state: PerUserState,
  budgetCalls: number,
): Promise<{ users: CurrentUser[]; selection: Selection }> {
  const users = (await currentUsers(ctx.outDir, g.id)).filter((u) => inShard(u.id, ctx.options.shard));
  const activity = activityOf(ctx, g.id);
  const active = new Set<number>(def.refreshActiveUsers ? activity.ids : []);
  if (def.refreshActiveUsers) for (const u of users) if (u.email && activity.emails.has(u.email)) active.add(u.id);
  const changedAt = new Map<number, string>();
  const joined = new Set<number>();
  for (const c of await userChangesOf(ctx, g.id)) {
    if (c.at > (changedAt.get(c.id) ?? '')) changedAt.set(c.id, c.at);
    if (c.kinds.includes('joined')) joined.add(c.id);
  }
  const selection = selectUsers({
    users,
    refreshed: state.users,
    active,
    done: new Set(state.pass?.done ?? []),
    recorded: { changedAt, joined },
    budgetCalls,
    maxAgeDays: ctx.options.maxAgeDays,
    now: ctx.now,
  });
  return { users, selection };
}
