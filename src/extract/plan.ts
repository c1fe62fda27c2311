/**
 * `perks extract --plan`: what a run of this worker (its `--shard`, its `--groups`) would do, per stream
 * and group, without calling any listing: windows (or users), estimated calls, and the time they take
 * at the current rate limit. Snapshot sizes are estimated from the lake's latest snapshot (one page
 * when there is none).
 */
import { join } from 'node:path';
import { withLakeConnection } from '../lake/index.js';
import type { StreamDefinition } from './define.js';
import { currentUsers } from './current-users.js';
import { hasParquet } from './lake-files.js';
import type { RunContext } from './run-context.js';
import type { WindowState } from './state.js';
import { planWindows } from './windowed-job.js';
import { landedElsewhere, perUserBudgets, pickUsers, startingState, workerScope } from './worker-share.js';

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
}

export async function planExtract(ctx: RunContext, streams: StreamDefinition[]): Promise<Plan> {
  const plan: Plan = { scope: workerScope(ctx), rows: [], elsewhere: [] };
  let budgets: Map<number, number> | undefined;
  for (const def of streams) {
    const reason = landedElsewhere(ctx, def);
    if (reason) {
      plan.elsewhere.push({ stream: def.name, reason });
      continue;
    }
    const groups = def.scope === 'organisation' && def.name !== 'groups' ? [undefined] : ctx.groups;
    for (const g of groups) {
      if (def.kind === 'snapshot') {
        const last = def.name === 'groups' ? 1 : await lastSnapshotRows(ctx.outDir, def.name, g?.id);
        plan.rows.push({ stream: def.name, group: g?.id, units: 1, unit: 'snapshot', estimatedCalls: def.name === 'groups' ? 0 : Math.max(1, Math.ceil(last / 100)), detail: `${last} rows last time` });
      } else if (def.kind === 'windowed' && g) {
        const windows = planWindows(ctx, def, g, await ctx.state.read<WindowState>(def.name, String(g.id)));
        const batches = def.userBatch ? Math.ceil((await currentUsers(ctx.outDir, g.id)).length / def.userBatch.size) : 1;
        plan.rows.push({ stream: def.name, group: g.id, units: windows.windows.length, unit: 'windows', estimatedCalls: windows.windows.length * batches, detail: `${windows.from} to ${windows.upper} (exclusive), ${windows.skipped} already done` });
      } else if (def.kind === 'per-user' && g) {
        // The same state, shard, budget and selection as the run (worker-share.ts); the users active in
        // this run's windows are known only once the windows are landed.
        budgets ??= await perUserBudgets(ctx);
        const { selection: s } = await pickUsers(ctx, def, g, await startingState(ctx, def, g), budgets.get(g.id) ?? 0);
        plan.rows.push({ stream: def.name, group: g.id, units: s.users.length, unit: 'users', estimatedCalls: s.users.length, detail: `${JSON.stringify(s.counts)}, ${s.deferred} deferred; plus users active in new windows` });
      }
    }
  }
  return plan;
}

async function lastSnapshotRows(outDir: string, stream: string, group?: number): Promise<number> {
  const dir = join(outDir, 'lake', stream, ...(group === undefined ? [] : [`organisation_group_id=${group}`]));
  if (!hasParquet(dir)) return 0;
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `WITH s AS (SELECT _snapshot_date::VARCHAR AS d FROM read_parquet($glob, hive_partitioning = true, union_by_name = true))
       SELECT count(*)::BIGINT AS n FROM s WHERE d = (SELECT max(d) FROM s)`,
      { glob: join(dir, '**', '*.parquet') },
    );
    return Number(r.getRowObjectsJS()[0]?.n ?? 0);
  });
}

export function formatPlan(plan: Plan, callsPerMinute: number): string {
  const lines = [`plan for ${plan.scope}, no listing called:`];
  for (const r of plan.rows) {
    lines.push(`  ${r.stream.padEnd(17)} group ${String(r.group ?? '-').padEnd(6)} ${String(r.units).padStart(6)} ${r.unit.padEnd(8)} ~${String(r.estimatedCalls).padStart(7)} calls  ${r.detail}`);
  }
  for (const e of plan.elsewhere) lines.push(`  ${e.stream.padEnd(17)} not here: ${e.reason}`);
  const total = plan.rows.reduce((n, r) => n + r.estimatedCalls, 0);
  lines.push(`  total ~${total} calls: about ${(total / callsPerMinute).toFixed(1)} minutes at ${Math.floor(callsPerMinute)} calls/min`);
  return `${lines.join('\n')}\n`;
}
