/**
 * Snapshot streams: the whole listing lands in today's `_snapshot_date` partition (a rerun the same day
 * replaces it); the latest snapshot is current. Groups were already read when the run resolved them,
 * so they land without another call.
 */
import type { SnapshotStream } from '../../../pipelines/index.js';
import { pageInto } from '../landing/listing.js';
import type { GroupInfo, RunContext } from '../run-context.js';
import { addCommit, newTally, type GroupTally } from '../result.js';
import { groupIdOf } from '../groups.js';
import { trackUserChanges, type UserChange } from './user-changes.js';
import { rm } from 'node:fs/promises';
import { relative } from 'node:path';
import { damagedFiles, streamDir } from '../../lake/index.js';

function noteChanges(tally: GroupTally, changes: UserChange[]): void {
  if (!changes.length) return;
  const count = new Map<string, number>();
  for (const c of changes) for (const k of c.kinds) count.set(k, (count.get(k) ?? 0) + 1);
  tally.notes.push(`users since the last snapshot: ${[...count].map(([k, n]) => `${n} ${k}`).join(', ')}`);
  tally.changes = Object.fromEntries(count);
}

export async function runSnapshot(ctx: RunContext, def: SnapshotStream, g?: GroupInfo): Promise<GroupTally> {
  const tally = newTally(g?.id);
  if (def.name === 'groups' && g?.recordQuarantined) {
    tally.notes.push(
      'its record was quarantined, so no groups row landed today; its id and timezone were read from it',
    );
    return tally;
  }
  const partition: Record<string, string> = g ? { organisation_group_id: String(g.id) } : {};
  partition._snapshot_date = ctx.now.toISOString().slice(0, 10);
  // Users: what changed since the last snapshot is recorded before this one replaces it (user-changes.ts).
  const changes = def.name === 'users' && g ? await trackUserChanges(ctx, g.id) : undefined;
  const write = await ctx.landing.open(def, partition, 'replace');
  try {
    if (def.name === 'groups' && g) {
      await write.append([g.group]);
      tally.rows += 1;
    } else {
      await pageInto(
        ctx.client,
        ctx.landing,
        def.name,
        write,
        tally,
        def.operation as 'listUsers',
        { group: g?.id, body: def.body },
        changes?.see,
      );
    }
    await ctx.durably(async () => {
      if (changes) noteChanges(tally, await changes.record());
      addCommit(tally, await write.commit());
    });
  } catch (err) {
    await write.abort();
    throw err;
  }
  tally.windows = 1;
  await removeDamagedSnapshots(ctx, def, g, tally);
  return tally;
}

/**
 * A damaged snapshot file (cut short, overwritten) of an earlier day can never be extracted again: the
 * API gives only today's listing, which has just landed. Its rows are unreadable anyway, and it stops
 * every reader of the stream, so the run that lands a newer snapshot removes it and says so.
 */
async function removeDamagedSnapshots(
  ctx: RunContext,
  def: SnapshotStream,
  g: GroupInfo | undefined,
  tally: GroupTally,
): Promise<void> {
  const dir = streamDir(ctx.output.dir, def.name, g?.id);
  const damaged = damagedFiles(dir);
  for (const file of damaged) await rm(file, { force: true });
  if (damaged.length)
    tally.notes.push(
      `removed ${damaged.length} damaged snapshot file${damaged.length === 1 ? '' : 's'} of earlier days (unreadable; ` +
        `today's snapshot is current): ${damaged.map((f) => relative(ctx.output.dir, f)).join(', ')}`,
    );
}

/**
 * The group records the schema refused, quarantined and counted once: each by the worker that runs its
 * group, the others (groups no worker asked for) by the worker that leads the organisation.
 */
export async function quarantineGroupRejects(ctx: RunContext, def: SnapshotStream): Promise<GroupTally> {
  const tally = newTally();
  const mine = new Set(ctx.groups.map((g) => g.id));
  const ids: string[] = [];
  for (const reject of ctx.groupRejects) {
    const id = groupIdOf(reject.record);
    if (!ctx.leadsOrganisation && (id === undefined || !mine.has(id))) continue;
    await ctx.landing.quarantine(def.name, reject.record, reject.message);
    tally.rejected += 1;
    ids.push(id === undefined ? '(no id)' : String(id));
  }
  if (ids.length)
    tally.notes.push(
      `${ids.length} group record${ids.length === 1 ? '' : 's'} quarantined (group ${ids.join(', ')}): the schema refused ${ids.length === 1 ? 'it' : 'them'}`,
    );
  return tally;
}
