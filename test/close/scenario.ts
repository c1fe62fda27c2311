/**
 * The finance-close scenario, for real: a tiny sandbox over HTTP, orders extracted from 1 October 2026 on
 * its day (2026-11-22) and built; later, October orders refunded upstream and October re-read on a later
 * instant of the same day, and built again.
 */
import { extract } from '../../src/extract/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { atInstant } from '../support/clock.js';
import { orgConfig } from '../support/sandbox.js';
import { outputAt } from '../../src/output/index.js';

export const TODAY = '2026-11-22';
export const OCTOBER = '2026-10';

/**
 * Extract orders (and groups) from `from` at `at` (the program's clock pinned there), then build with as-of
 * TODAY; throws when either fails.
 */
export async function extractAndBuild(sandbox: Sandbox, out: string, at: string, from = '2026-10-01'): Promise<void> {
  const r = await atInstant(at, () =>
    extract(orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' }), {
      output: outputAt(out),
      now: new Date(at),
      streams: ['orders'],
      startDate: from,
    }),
  );
  if (r.status !== 'success') throw new Error(`extract ${r.status}`);
  const b = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
  if (!b.ok) throw new Error(`build: ${b.error}`);
}

/**
 * Indexes (order_id − 700001) of the first `n` visible Complete orders of group `group` created between
 * 3 and 28 October 2026 (UTC), skipping the first `skip`: October in every group's local days.
 */
export function octoberCompleteOrders(sandbox: Sandbox, group: number, n: number, skip = 0): number[] {
  return completeOrders(sandbox, group, ['2026-10-03', '2026-10-29'], n, skip);
}

/**
 * Indexes (order_id − 700001) of the first `n` visible Complete orders of group `group` created in the UTC days
 * [from, to), skipping the first `skip`.
 */
export function completeOrders(
  sandbox: Sandbox,
  group: number,
  [from, to]: [string, string],
  n: number,
  skip = 0,
): number[] {
  const store = sandbox.world.orders;
  const groupIndex = sandbox.world.groups.findIndex((g) => g.id === group);
  const found: number[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  let skipped = 0;
  for (
    let i = store.lowerBound(Date.parse(`${from}T00:00:00Z`));
    i < store.count && store.createdAt[i] < end && found.length < n;
    i++
  ) {
    if (store.group[i] !== groupIndex || store.statusOf(i) !== 'Complete' || store.hidden[i] === 1) continue;
    if (skipped++ < skip) continue;
    found.push(i);
  }
  return found;
}
