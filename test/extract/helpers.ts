/** Shared by the extract tests: a config for a sandbox credential, and the lake and truth as comparable rows. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { dayWindows } from '../../src/extract/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';

export function tempOut(prefix = 'perks-extract-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function orgEnv(sandbox: Sandbox, outDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const org = sandbox.credentials.organisation;
  return {
    PERKS_BASE_URL: sandbox.baseUrl,
    PERKS_CLIENT_ID: String(org.client_id),
    PERKS_CLIENT_SECRET: org.client_secret,
    PERKS_GROUP_IDS: org.organisation_group_ids.join(','),
    PERKS_RATE_LIMIT: '100000',
    PERKS_OUTPUT: outDir,
    // A command runs on the sandbox's day (noon UTC: the same local day in every group's zone).
    PERKS_NOW: `${sandbox.world.today}T12:00:00Z`,
    ...extra,
  };
}

export function orgConfig(sandbox: Sandbox, outDir: string, extra: Record<string, string> = {}): Config {
  return loadConfig(orgEnv(sandbox, outDir, extra));
}

export interface OrderRow {
  group: number;
  order_date: string;
  order_id: number;
  order_status: string;
  face_value: string;
  group_revenue: string;
}

/** The lake's orders as landed: one row per (group, order_id) would be the contract; duplicates are kept to be seen. */
export async function lakeOrders(outDir: string): Promise<OrderRow[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT organisation_group_id::BIGINT AS g, order_date::DATE::VARCHAR AS d, order_id::BIGINT AS id, order_status AS s,
              face_value::VARCHAR AS fv, group_revenue::VARCHAR AS gr
       FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) ORDER BY g, id`,
      { glob: join(outDir, 'lake', 'orders', '**', '*.parquet') },
    );
    const rows = r.getRowObjectsJS() as (Record<'d' | 's' | 'fv' | 'gr', string> & Record<'g' | 'id', bigint>)[];
    return rows.map((x) => ({
      group: Number(x.g),
      order_date: String(x.d),
      order_id: Number(x.id),
      order_status: String(x.s),
      face_value: String(x.fv),
      group_revenue: String(x.gr),
    }));
  });
}

/** What the sandbox holds for each group's local days in [from, to): the same rows, from the world. */
export function truthOrders(
  sandbox: Sandbox,
  groups: { id: number; timezone: string }[],
  from: string,
  to: string,
): OrderRow[] {
  const out: OrderRow[] = [];
  for (const g of groups) {
    for (const w of dayWindows(from, to, g.timezone)) {
      for (const o of sandbox.world.ordersOf(g.id, { from: w.start.getTime(), to: w.end.getTime() - 1 })) {
        out.push({
          group: g.id,
          order_date: w.startDay,
          order_id: o.order_id,
          order_status: o.status,
          face_value: (o.face_value / 100).toFixed(2),
          group_revenue: (o.group_revenue / 100).toFixed(2),
        });
      }
    }
  }
  return out.sort((a, b) => a.group - b.group || a.order_id - b.order_id);
}
