/**
 * `perks extract --plan`: what a run would do, per stream and group, without calling any listing:
 * windows (or users), estimated calls, and the time they take at the current rate limit. Snapshot
 * sizes are estimated from the lake's latest snapshot (one page when there is none).
 */
import { join } from 'node:path';
import { withLakeConnection } from '../lake/index.js';
import type { StreamDefinition } from './define.js';
import { currentUsers } from './current-users.js';
import { hasParquet } from './lake-files.js';
import type { RunContext } from './run-context.js';
import type { PerUserState, WindowState } from './state.js';
import { selectUsers } from './user-selection.js';
import { planWindows } from './windowed-job.js';

export interface PlanRow {
  stream: string;
  group?: number;
  /** Windows (windowed), users (per-user) or 1 (snapshot). */
  units: number;
  unit: 'windows' | 'users' | 'snapshot';
  estimatedCalls: number;
  detail: string;
}

export async function planExtract(ctx: RunContext, streams: StreamDefinition[]): Promise<PlanRow[]> {
  const rows: PlanRow[] = [];
  for (const def of streams) {
    const groups = def.scope === 'organisation' && def.name !== 'groups' ? [undefined] : ctx.groups;
    for (const g of groups) {
      if (def.kind === 'snapshot') {
        const last = def.name === 'groups' ? 1 : await lastSnapshotRows(ctx.outDir, def.name, g?.id);
        rows.push({ stream: def.name, group: g?.id, units: 1, unit: 'snapshot', estimatedCalls: def.name === 'groups' ? 0 : Math.max(1, Math.ceil(last / 100)), detail: `${last} rows last time` });
      } else if (def.kind === 'windowed' && g) {
        const plan = planWindows(ctx, def, g, await ctx.state.read<WindowState>(def.name, String(g.id)));
        const batches = def.userBatch ? Math.ceil((await currentUsers(ctx.outDir, g.id)).length / def.userBatch.size) : 1;
        rows.push({ stream: def.name, group: g.id, units: plan.windows.length, unit: 'windows', estimatedCalls: plan.windows.length * batches, detail: `${plan.from} to ${plan.upper} (exclusive), ${plan.skipped} already done` });
      } else if (def.kind === 'per-user' && g) {
        const state = (await ctx.state.read<PerUserState>(def.name, String(g.id))) ?? { users: {} };
        const users = await currentUsers(ctx.outDir, g.id);
        const budget = Math.floor((ctx.options.budgetMinutes * ctx.client.limiter.currentRate) / 2);
        const s = selectUsers({ users, refreshed: ctx.options.fullRefresh ? {} : state.users, active: new Set(), done: new Set(), budgetCalls: budget, maxAgeDays: ctx.options.maxAgeDays, now: ctx.now });
        rows.push({ stream: def.name, group: g.id, units: s.users.length, unit: 'users', estimatedCalls: s.users.length, detail: `${JSON.stringify(s.counts)}, ${s.deferred} deferred; plus users active in new windows` });
      }
    }
  }
  return rows;
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

export function formatPlan(rows: PlanRow[], callsPerMinute: number): string {
  const lines = ['plan (no listing called):'];
  for (const r of rows) {
    lines.push(`  ${r.stream.padEnd(17)} group ${String(r.group ?? '-').padEnd(6)} ${String(r.units).padStart(6)} ${r.unit.padEnd(8)} ~${String(r.estimatedCalls).padStart(7)} calls  ${r.detail}`);
  }
  const total = rows.reduce((n, r) => n + r.estimatedCalls, 0);
  lines.push(`  total ~${total} calls: about ${(total / callsPerMinute).toFixed(1)} minutes at ${Math.floor(callsPerMinute)} calls/min`);
  return `${lines.join('\n')}\n`;
}
