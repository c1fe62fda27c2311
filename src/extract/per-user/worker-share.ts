/**
 * A worker's share of the round (`--shard K/N`, `--groups`): which streams it lands, which users of a
 * per-user stream it refreshes and with what call budget. The run and `--plan` both ask here, so the
 * plan is exactly the work the worker would do.
 */
import { currentUsers } from './current-users.js';
import type { PerUserStream, StreamDefinition } from '../../../pipelines/index.js';
import { activityOf, type GroupInfo, type RunContext } from '../run-context.js';
import { inShard, landsSharedStreams, readPerUserState, shardLabel } from './shard.js';
import { resumes, type PerUserState } from '../state.js';
import {
  SIGNALS,
  selectUsers,
  type CurrentUser,
  type Reason,
  type Recorded,
  type Selection,
} from './user-selection.js';
import { expiredCreditUsers } from './expiring-credit.js';
import { describeScope } from './work-lock.js';
import { userChangesOf, type ChangeKind } from '../snapshots/user-changes.js';

/** Recorded changes of a user's lifecycle: they rank above logins and profile edits. */
const LIFECYCLE = new Set<ChangeKind>(['status', 'deactivated', 'restored', 'anonymised']);

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
 * credential's rate) 1/N each. Across groups the ranks (user-selection.ts) are served in order: every
 * group gets what its signals of a rank need before any group gets a call for a lower rank; a rank that
 * does not fit whole is shared by its users per group. The backlog and the overdue then share the rest by
 * each group's share of users. Without `def` the split is by share of users.
 */
export async function perUserBudgets(
  ctx: RunContext,
  def?: PerUserStream,
  usersOf?: (group: number) => Promise<number>,
): Promise<Map<number, number>> {
  // named users (the close's refresh) are one stream's whole work: the budget is not split between two
  const streams = ctx.options.refreshUsers ? 1 : 2;
  const perStream = Math.floor(
    (ctx.options.budgetMinutes * ctx.client.limiter.currentRate) / streams / (ctx.options.shard?.count ?? 1),
  );
  // The run counts the landed users; --plan may estimate a group's users from the listing (user-estimate.ts).
  const count = usersOf ?? (async (group: number) => (await currentUsers(ctx.output.dir, group)).length);
  const counts = await Promise.all(ctx.groups.map(async (g) => [g.id, await count(g.id)] as const));
  const share = (pool: number, weights: readonly (readonly [number, number])[]) => {
    const total = weights.reduce((n, [, c]) => n + c, 0) || 1;
    return new Map(weights.map(([id, c]) => [id, Math.ceil((pool * c) / total)]));
  };
  const budgets = new Map(counts.map(([id]) => [id, 0]));
  let pool = perStream;
  if (def) {
    const needs = new Map<number, Record<Reason, number>>();
    for (const g of ctx.groups) {
      const { selection } = await pickUsers(ctx, def, g, await startingState(ctx, def, g), Number.MAX_SAFE_INTEGER);
      needs.set(g.id, selection.counts);
    }
    for (const reason of SIGNALS) {
      const weights = [...needs].map(([id, n]) => [id, n[reason]] as const);
      const need = weights.reduce((n, [, c]) => n + c, 0);
      if (need === 0) continue;
      const given = need <= pool ? new Map(weights) : share(pool, weights);
      for (const [id, n] of given) budgets.set(id, budgets.get(id)! + n);
      pool -= Math.min(pool, need);
      if (pool <= 0) return budgets;
    }
  }
  for (const [id, n] of share(pool, counts)) budgets.set(id, budgets.get(id)! + n);
  return budgets;
}

/**
 * The group's per-user state as this run starts from it: every shard's refreshes of this worker's
 * users (shard.ts), none with --full-refresh, and a new pass unless an interrupted one resumes.
 */
export async function startingState(ctx: RunContext, def: PerUserStream, g: GroupInfo): Promise<PerUserState> {
  const state = await readPerUserState(
    { outDir: ctx.output.dir, state: ctx.state, shard: ctx.options.shard },
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
  const users = (await currentUsers(ctx.output.dir, g.id)).filter((u) => inShard(u.id, ctx.options.shard));
  const activity = activityOf(ctx, g.id);
  const ofUsers = (ids: Set<number>, emails: Set<string>) => {
    const found = new Set<number>(ids);
    for (const u of users) if (u.email && emails.has(u.email)) found.add(u.id);
    return found;
  };
  const active = def.refreshActiveUsers ? ofUsers(activity.ids, activity.emails) : new Set<number>();
  const credit = def.shape === 'credit';
  const bearing = credit ? ofUsers(activity.credit.ids, activity.credit.emails) : undefined;
  const recorded: Recorded = { lifecycleAt: new Map(), changedAt: new Map(), joined: new Set() };
  for (const c of await userChangesOf(ctx, g.id)) {
    const into = c.kinds.some((k) => LIFECYCLE.has(k)) ? recorded.lifecycleAt : recorded.changedAt;
    if (c.at > (into.get(c.id) ?? '')) into.set(c.id, c.at);
    if (c.kinds.includes('joined')) recorded.joined.add(c.id);
  }
  const selection = selectUsers({
    users,
    refreshed: state.users,
    active,
    bearing,
    expiring: credit ? await expiredCreditUsers(ctx.output.dir, g.id, ctx.now) : undefined,
    done: new Set(state.pass?.done ?? []),
    recorded,
    requested: ctx.options.refreshUsers ? (ctx.options.refreshUsers[g.id] ?? []) : undefined,
    budgetCalls,
    maxAgeDays: ctx.options.maxAgeDays,
    now: ctx.now,
  });
  return { users, selection };
}
