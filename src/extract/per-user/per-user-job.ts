/**
 * Per-user streams (credit, interactions), per group: one listing per selected user (see
 * user-selection.ts). Results land as refresh batches: each commit adds one file to the day's
 * partition, and a user's latest row is current. The state records refreshed users only after the
 * batch holding them is committed, so a resumed pass skips them and a crash loses nothing.
 */
import type { PerUserStream } from '../../../pipelines/index.js';
import { pageInto } from '../landing/listing.js';
import { forEachLimit } from '../pool.js';
import type { GroupInfo, RunContext } from '../run-context.js';
import { addCommit, newTally, type GroupTally } from '../result.js';
import { StateWriter, type PerUserState } from '../state.js';
import { fingerprint, rankText, type CurrentUser } from './user-selection.js';
import { perUserStateKey } from './shard.js';
import { pickUsers, startingState } from './worker-share.js';
import { UserCredit } from '../../resources/credit.js';
import type { PartitionWrite } from '../landing/landing.js';

/** Users per committed batch: bounds what a crash can make the next run ask again. */
const BATCH_USERS = 200;

export async function runPerUserGroup(
  ctx: RunContext,
  def: PerUserStream,
  g: GroupInfo,
  budgetCalls: number,
): Promise<GroupTally> {
  const tally = newTally(g.id);
  const key = String(g.id);
  // Sharded: this worker's users only, its own state file, the refreshes of every shard (shard.ts).
  const state = new StateWriter<PerUserState>(
    ctx.state,
    def.name,
    perUserStateKey(g.id, ctx.options.shard),
    await startingState(ctx, def, g),
  );
  const { users, selection } = await pickUsers(ctx, def, g, state.value, budgetCalls);
  const byId = new Map(users.map((u) => [u.id, u]));
  tally.users = { ...selection.counts, deferred: selection.deferred };
  tally.waiting = selection.waiting;
  if (selection.deferred > 0) {
    const note =
      `${selection.deferred} users wait for a later run: ` +
      `the call budget (${budgetCalls} calls) is spent (served/waiting by rank: ` +
      `${rankText(selection.counts, selection.waiting)}); raise --budget-minutes or the rate limit`;
    tally.notes.push(note);
    ctx.emit({ event: 'warning', stream: def.name, group: g.id, message: note });
  }
  ctx.emit({
    event: 'plan',
    stream: def.name,
    group: g.id,
    users: selection.users.length,
    ...selection.counts,
    deferred: selection.deferred,
    waiting: selection.waiting,
  });

  const batches: number[][] = [];
  for (let i = 0; i < selection.users.length; i += BATCH_USERS)
    batches.push(selection.users.slice(i, i + BATCH_USERS).map((u) => u.id));
  const snapshotDate = ctx.now.toISOString().slice(0, 10);

  for (const batch of batches) {
    const write = await ctx.landing.open(def, { organisation_group_id: key, _snapshot_date: snapshotDate }, 'append');
    try {
      await forEachLimit(batch, ctx.options.concurrency, (id) => fetchUser(ctx, def, g, id, state.value, write, tally));
      const at = ctx.now.toISOString();
      await ctx.durably(async () => {
        addCommit(tally, await write.commit());
        await state.update((s) => {
          for (const id of batch) {
            s.users[id] = { at, fp: fingerprint(byId.get(id) as CurrentUser) };
            s.pass!.done.push(id);
          }
        });
      });
    } catch (err) {
      await write.abort();
      throw err;
    }
    tally.windows += 1;
    ctx.emit({ event: 'batch', stream: def.name, group: g.id, users: batch.length });
  }
  await state.update((s) => void (s.pass!.finished = true));
  return tally;
}

async function fetchUser(
  ctx: RunContext,
  def: PerUserStream,
  g: GroupInfo,
  id: number,
  state: PerUserState,
  write: PartitionWrite,
  tally: GroupTally,
): Promise<void> {
  const path = { identifier: def.identifier, identifier_value: id };
  if (def.shape === 'credit') return fetchCredit(ctx, g, id, write, tally);
  const last = state.users[id];
  const from = last
    ? new Date(Date.parse(last.at) - ctx.config.lookbackDays * 86_400_000).toISOString()
    : `${ctx.config.startDate ?? new Date(ctx.now.getTime() - 90 * 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`;
  const body = { ...def.body, [def.window!.fromParam]: from, [def.window!.toParam]: ctx.stamp.toISOString() };
  await pageInto(ctx.client, ctx.landing, def.name, write, tally, def.operation as 'listInteractions', {
    path,
    group: g.id,
    body,
  });
}

/** Credit: the balances come with every page; the items are paged. One row per user. */
async function fetchCredit(
  ctx: RunContext,
  g: GroupInfo,
  id: number,
  write: PartitionWrite,
  tally: GroupTally,
): Promise<void> {
  const credits: unknown[] = [];
  let balances: Record<string, unknown> | undefined;
  for await (const page of ctx.client.paginate('userCredit', {
    path: { identifier: 'id', identifier_value: id },
    group: g.id,
  })) {
    balances ??= (page.data ?? {}) as Record<string, unknown>;
    credits.push(...page.records);
    for (const reject of page.rejects) await ctx.landing.quarantine('credit', reject.record, reject.message);
    tally.rejected += page.rejects.length;
  }
  const parsed = UserCredit.safeParse({ ...balances, credits: [] });
  if (!parsed.success) {
    await ctx.landing.quarantine('credit', balances, parsed.error.issues[0].message);
    tally.rejected += 1;
    return;
  }
  await write.append([{ ...parsed.data, credits, user_id: id }]);
  tally.rows += 1;
}
