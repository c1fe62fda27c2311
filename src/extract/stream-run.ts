/**
 * One stream of an extract run: its groups' parts, run as the stream's kind says (one organisation listing, a
 * snapshot per group, windows per group, or users per group), with the calls, retries, 429s and time each caused.
 */
import { inScope } from '../api/index.js';
import type { StreamDefinition } from '../../pipelines/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { awaitHandoff, writeHandoff } from './per-user/handoff.js';
import { runPerUserGroup } from './per-user/per-user-job.js';
import { forEachLimit } from './pool.js';
import { emptyStreamResult, type GroupTally, type StreamResult } from './result.js';
import type { RunContext } from './run-context.js';
import { landsSharedStreams } from './per-user/shard.js';
import { quarantineGroupRejects, runSnapshot } from './snapshots/snapshot-job.js';
import { runWindowedGroup } from './windows/windowed-job.js';
import { perUserBudgets } from './per-user/worker-share.js';

export async function runStream(ctx: RunContext, def: StreamDefinition): Promise<StreamResult> {
  const before = ctx.client.counters.snapshot();
  const started = Date.now();
  const tallies: GroupTally[] = [];
  const result = emptyStreamResult(def.name, 'success', tallies);
  ctx.emit({ event: 'stream', stream: def.name });
  try {
    await runParts(ctx, def, tallies, result);
  } catch (err) {
    result.status = 'error';
    result.error = redact(err instanceof Error ? err.message : String(err));
    // A corrupt state file is the operator's to fix (2), refused credentials too (3): keep their codes.
    result.exitCode = (err as { exitCode?: number }).exitCode ?? ExitCode.failed;
    ctx.emit({ event: 'error', stream: def.name, message: result.error });
  }
  const after = ctx.client.counters.snapshot();
  result.rows = tallies.reduce((n, t) => n + t.rows, 0);
  result.rejected = tallies.reduce((n, t) => n + t.rejected, 0);
  result.calls = after.calls - before.calls;
  result.retries = after.retries - before.retries;
  result.throttled = after.throttled - before.throttled;
  result.ms = Date.now() - started;
  for (const t of tallies) noteListingDifference(t);
  ctx.emit({
    event: 'stream_done',
    stream: def.name,
    status: result.status,
    rows: result.rows,
    calls: result.calls,
    ms: result.ms,
  });
  return result;
}

/** The stream's parts, by its kind, each group's tally pushed as it ends. */
async function runParts(ctx: RunContext, def: StreamDefinition, tallies: GroupTally[], result: StreamResult) {
  if (def.kind === 'snapshot' && def.scope === 'organisation' && def.name !== 'groups') {
    tallies.push(await groupPart(ctx, def, undefined, () => runSnapshot(ctx, def)));
  } else if (def.kind === 'snapshot') {
    await forEachLimit(
      ctx.groups,
      ctx.options.concurrency,
      async (g) => void tallies.push(await groupPart(ctx, def, g.id, () => runSnapshot(ctx, def, g))),
    );
    if (def.name === 'groups') tallies.push(await quarantineGroupRejects(ctx, def));
  } else if (def.kind === 'windowed') {
    // A group whose timezone cannot be read has no local days: its windows fail, the other groups' run.
    const unreadable = ctx.groups.filter((g) => g.timezoneError);
    await forEachLimit(
      ctx.groups.filter((g) => !g.timezoneError),
      ctx.options.concurrency,
      async (g) => void tallies.push(await groupPart(ctx, def, g.id, () => runWindowedGroup(ctx, def, g))),
    );
    if (unreadable.length) {
      result.status = 'error';
      result.error =
        `${unreadable.map((g) => g.timezoneError).join('; ')}: ` +
        `no ${def.name} window extracted for ${unreadable.length === 1 ? 'it' : 'them'}, the other groups' were; fix the timezone upstream and rerun`;
      result.exitCode = ExitCode.failed;
      result.failedGroups = unreadable.map((g) => g.id);
      ctx.emit({ event: 'error', stream: def.name, message: result.error });
    }
  } else {
    const shard = ctx.options.shard;
    if (shard) await (ctx.handoff ??= landsSharedStreams(shard) ? writeHandoff(ctx) : awaitHandoff(ctx));
    const budgets = await perUserBudgets(ctx, def);
    for (const g of ctx.groups)
      tallies.push(await groupPart(ctx, def, g.id, () => runPerUserGroup(ctx, def, g, budgets.get(g.id) ?? 0)));
  }
}

/** A listing whose pages reported another count than what landed and was quarantined: said beside the group. */
function noteListingDifference(t: GroupTally): void {
  if (t.expected !== undefined && t.expected !== t.rows + t.rejected) {
    t.notes.push(
      `the listings reported ${t.expected} records, ${t.rows} landed and ${t.rejected} quarantined: ` +
        `${t.expected - t.rows - t.rejected} differ (records added or removed while paging)`,
    );
  }
}

/**
 * One group's part of a stream, with the calls, retries and 429s it caused (counted in its own scope,
 * see Counters) and its time: the run manifest's per-group figures.
 */
async function groupPart(
  ctx: RunContext,
  def: StreamDefinition,
  group: number | undefined,
  work: () => Promise<GroupTally>,
): Promise<GroupTally> {
  const scope = `${def.name}/${group ?? 'organisation'}`;
  const traffic = () => ({ ...(ctx.client.counters.byScope[scope] ?? { calls: 0, retries: 0, throttled: 0 }) });
  const before = traffic();
  const started = Date.now();
  const tally = await inScope(scope, work);
  const after = traffic();
  return {
    ...tally,
    calls: after.calls - before.calls,
    retries: after.retries - before.retries,
    throttled: after.throttled - before.throttled,
    ms: Date.now() - started,
  };
}
