/**
 * The hand-off between the shards of one round. Shard 1 lands the shared streams (groups, users,
 * offers, orders, redemption stats), then writes, per group, `<out>/state/shard_handoff/<group>.json`:
 * the UTC day of its run and the users its windows marked active. Shards 2..N wait for that day's
 * hand-off before they pick their users, so each one plans from today's users snapshot and the same
 * active users a single worker would have seen. A hand-off is valid for its UTC day: a shard rerun
 * later the same day uses it again; tomorrow's shards wait for tomorrow's shard 1.
 */
import { ExtractError } from '../errors.js';
import { currentUsers } from './current-users.js';
import { activityOf, type RunContext } from '../run-context.js';
import { shardLabel } from './shard.js';
import { now } from '../../shared/clock.js';
import { camelKeys, snakeKeys } from '../../shared/json-keys.js';

export interface Handoff {
  /** UTC day of the shard-1 run (the `_snapshot_date` of what it landed). */
  day: string;
  runId: string;
  writtenAt: string;
  /** User ids with new or changed orders or redemptions in the run's windows. */
  active: number[];
  /** Of those, the users whose orders bear on their credit (credit spent, refunds); absent in older hand-offs. */
  credit?: number[];
}

const STREAM = 'shard_handoff';
const POLL_MS = 1_000;
const runDay = (ctx: RunContext) => ctx.now.toISOString().slice(0, 10);

/** A group's hand-off, either spelling (snake_case since issue 43, camelCase before). */
const readHandoff = async (ctx: RunContext, group: number) =>
  camelKeys(await ctx.state.read(STREAM, String(group))) as Handoff | undefined;

/** Shard 1, once the shared streams are landed: what the other shards need, per group. */
export async function writeHandoff(ctx: RunContext): Promise<void> {
  const day = runDay(ctx);
  for (const g of ctx.groups) {
    const activity = activityOf(ctx, g.id);
    const active = new Set<number>(activity.ids);
    const credit = new Set<number>(activity.credit.ids);
    if (activity.emails.size) {
      for (const u of await currentUsers(ctx.output.dir, g.id)) {
        if (u.email && activity.emails.has(u.email)) active.add(u.id);
        if (u.email && activity.credit.emails.has(u.email)) credit.add(u.id);
      }
    }
    // A rerun the same day keeps what an earlier run of the day found active (its windows are done now).
    const earlier = await readHandoff(ctx, g.id);
    if (earlier?.day === day) earlier.active.forEach((id) => active.add(id));
    if (earlier?.day === day) earlier.credit?.forEach((id) => credit.add(id));
    const handoff: Handoff = {
      day,
      runId: ctx.runId,
      writtenAt: now().toISOString(),
      active: [...active].sort((a, b) => a - b),
      credit: [...credit].sort((a, b) => a - b),
    };
    await ctx.state.write(STREAM, String(g.id), snakeKeys(handoff)); // run_id, written_at: JSON keys in snake_case
  }
  ctx.emit({ event: 'handoff', groups: ctx.groups.map((g) => g.id), day });
}

/** Shards 2..N: wait for today's hand-off of every group, then take its active users as this run's. */
export async function awaitHandoff(ctx: RunContext): Promise<void> {
  const day = runDay(ctx);
  const waitMs = ctx.options.shardWaitMinutes * 60_000;
  const started = Date.now();
  const pending = new Set(ctx.groups.map((g) => g.id));
  let announced = 0;
  for (;;) {
    for (const id of [...pending]) {
      const handoff = await readHandoff(ctx, id);
      if (handoff?.day !== day) continue;
      const activity = activityOf(ctx, id);
      handoff.active.forEach((u) => activity.ids.add(u));
      handoff.credit?.forEach((u) => activity.credit.ids.add(u));
      pending.delete(id);
    }
    if (pending.size === 0) return;
    const waited = Date.now() - started;
    if (waited >= waitMs) {
      const shard = ctx.options.shard!;
      throw new ExtractError(
        `shard ${shardLabel(shard)} waited ${ctx.options.shardWaitMinutes} min for shard 1/${shard.count} to land` +
          ` today's (${day}) users and windows of group(s) ${[...pending].join(', ')}: start shard 1 of the same round, or raise --shard-wait-minutes`,
      );
    }
    if (waited >= announced) {
      ctx.emit({ event: 'waiting', for: `shard 1/${ctx.options.shard?.count}`, groups: [...pending], day });
      announced += 60_000;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, waitMs - waited)));
  }
}
