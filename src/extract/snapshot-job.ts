/**
 * Snapshot streams: the whole listing lands in today's `_snapshot_date` partition (a rerun the same day
 * replaces it); the latest snapshot is current. Groups were already read when the run resolved them,
 * so they land without another call.
 */
import type { SnapshotStream } from './define.js';
import { pageInto } from './listing.js';
import type { GroupInfo, RunContext } from './run-context.js';
import { addCommit, newTally, type GroupTally } from './result.js';

export async function runSnapshot(ctx: RunContext, def: SnapshotStream, g?: GroupInfo): Promise<GroupTally> {
  const tally = newTally(g?.id);
  const partition: Record<string, string> = g ? { organisation_group_id: String(g.id) } : {};
  partition._snapshot_date = ctx.now.toISOString().slice(0, 10);
  const write = await ctx.landing.open(def, partition, 'replace');
  try {
    if (def.name === 'groups' && g) {
      await write.append([g.group]);
      tally.rows += 1;
    } else {
      await pageInto(ctx.client, ctx.landing, def.name, write, tally, def.operation as 'listUsers', { group: g?.id, body: def.body as never });
    }
    addCommit(tally, await write.commit());
  } catch (err) {
    await write.abort();
    throw err;
  }
  tally.windows = 1;
  return tally;
}
