/**
 * The platform's statistics count UTC days, the lake the group's local days: an order on a local day at a month's
 * edge can sit in the other UTC month. Orders placed in the sandbox around local midnight in London, New York and
 * Sydney, at both ends of October and across each zone's clock change, are explained in both months' rows; a real
 * difference is still named, by the status the statistics tell apart.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import { configFrom } from '../../src/config/index.js';
import { USER_STATUS } from '../../src/sandbox/choices.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { TODAY } from './scenario.js';
import { outputAt } from '../../src/output/index.js';

interface Placed {
  group: number;
  /** The instant, written in the zone's own offset on that day. */
  at: string;
  /** The group-local month of the order's day (the lake's), and its UTC month (the statistics'), worked out by hand. */
  local: string;
  utc: string;
  status?: 'Complete' | 'Cancelled';
  /** Listed by the statistics but not by the orders the lake read: a real difference. */
  unseen?: boolean;
}

/** One user each (none of whose other orders is near a month's edge), so a row's difference is its orders' alone. */
const USERS: Record<string, Placed[]> = {
  // London: British Summer Time (UTC+1) until 25 October, GMT after
  london_october_starts_in_september: [
    { group: 11, at: '2026-10-01T00:30:00+01:00', local: '2026-10', utc: '2026-09' },
  ],
  london_october_ends_on_utc: [{ group: 11, at: '2026-10-31T23:30:00+00:00', local: '2026-10', utc: '2026-10' }],
  // New York: EDT (UTC−4) until 1 November 02:00, EST (UTC−5) after
  new_york_evening_of_30_september: [
    { group: 12, at: '2026-09-30T23:30:00-04:00', local: '2026-09', utc: '2026-10', status: 'Cancelled' },
  ],
  new_york_evening_of_31_october: [{ group: 12, at: '2026-10-31T22:00:00-04:00', local: '2026-10', utc: '2026-11' }],
  new_york_morning_of_1_november: [
    { group: 12, at: '2026-10-01T00:30:00-04:00', local: '2026-10', utc: '2026-10' },
    // the second 01:30 of 1 November, after the clock went back
    { group: 12, at: '2026-11-01T01:30:00-05:00', local: '2026-11', utc: '2026-11' },
  ],
  // Sydney: AEST (UTC+10) until 4 October, AEDT (UTC+11) after
  sydney_morning_of_1_october: [{ group: 13, at: '2026-10-01T08:00:00+10:00', local: '2026-10', utc: '2026-09' }],
  sydney_morning_of_1_november: [{ group: 13, at: '2026-11-01T09:00:00+11:00', local: '2026-11', utc: '2026-10' }],
  sydney_late_on_31_october: [
    { group: 13, at: '2026-10-01T12:00:00+10:00', local: '2026-10', utc: '2026-10' },
    { group: 13, at: '2026-10-31T23:30:00+11:00', local: '2026-10', utc: '2026-10' },
  ],
  // real differences: an October order the platform counts and the lake never read. In London after the clock
  // change 1 November starts at UTC midnight, so an order then cannot be October's: the difference stays.
  london_unseen_complete: [
    { group: 11, at: '2026-11-01T00:30:00+00:00', local: '2026-11', utc: '2026-11' },
    { group: 11, at: '2026-10-15T12:00:00+01:00', local: '2026-10', utc: '2026-10', unseen: true },
  ],
  new_york_unseen_cancelled: [
    { group: 12, at: '2026-10-15T12:00:00-04:00', local: '2026-10', utc: '2026-10', status: 'Cancelled', unseen: true },
  ],
};
const MONTHS = ['2026-09', '2026-10', '2026-11'];
const EDGE_WINDOWS = [
  ['2026-09-28T00:00:00Z', '2026-10-03T00:00:00Z'],
  ['2026-10-29T00:00:00Z', '2026-11-03T00:00:00Z'],
].map(([from, to]) => ({ from: Date.parse(from), to: Date.parse(to) }));

/** An active user of the group, older than August, with no order near October's edges, not yet taken. */
function quietUser(sandbox: Sandbox, group: number, taken: Set<number>): number {
  const user = sandbox.world.users
    .inGroup(group)
    .find(
      (u) =>
        u.status === USER_STATUS.active &&
        u.created_at < Date.parse('2026-08-01T00:00:00Z') &&
        !taken.has(u.id) &&
        EDGE_WINDOWS.every((w) => sandbox.world.ordersOf(group, { userId: u.id, ...w }).length === 0),
    );
  if (!user) throw new Error(`no quiet user left in group ${group}`);
  taken.add(user.id);
  return user.id;
}

/** platform − lake orders the placed orders make in `month`: counted in their UTC month, held in their local one. */
const expectedDifference = (placed: Placed[], month: string) =>
  placed.filter((p) => p.utc === month).length - placed.filter((p) => p.local === month && !p.unseen).length;

test('orders around midnight in London, New York and Sydney at both ends of October, across the clock changes, are explained in both months; a real difference names its status', async () => {
  await withSandbox({ today: TODAY }, async (sandbox) => {
    const taken = new Set<number>();
    const users = Object.entries(USERS).map(([name, placed]) => ({
      name,
      placed,
      group: placed[0].group,
      userId: quietUser(sandbox, placed[0].group, taken),
    }));
    // placed first, then the unseen ones hidden by their instant (a later placement moves order ids on)
    for (const u of users)
      for (const p of u.placed) sandbox.world.placeOrder(p.group, p.at, u.userId, p.status ?? 'Complete');
    const unseen = users.flatMap((u) => u.placed.filter((p) => p.unseen).map((p) => ({ ...p, userId: u.userId })));
    const indexOf = (p: { at: string; userId: number }) => {
      const store = sandbox.world.orders;
      for (let i = store.lowerBound(Date.parse(p.at)); i < store.count; i++) if (store.user[i] === p.userId) return i;
      throw new Error(`placed order at ${p.at} not found`);
    };
    for (const p of unseen) sandbox.world.orders.setHidden(indexOf(p), true);

    const out = tempOut('perks-month-edges-');
    const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-09-01', PERKS_GROUP_IDS: '11,12,13' });
    const now = new Date(`${TODAY}T12:00:00Z`);
    expect((await extract(config, { output: outputAt(out), now, streams: ['orders'] })).status).toBe('success');
    for (const p of unseen) sandbox.world.orders.setHidden(indexOf(p), false);
    expect((await extract(config, { output: outputAt(out), now, streams: ['redemption_stats'] })).status).toBe(
      'success',
    );
    expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
    const wh = join(out, 'warehouse.duckdb');

    const rows = await query(
      wh,
      `SELECT organisation_group_id AS g, user_id, strftime(month, '%Y-%m') AS month, orders_difference, result, explanation
      FROM reconciliation_platform WHERE month BETWEEN DATE '2026-09-01' AND DATE '2026-11-01'`,
    );
    const row = (u: (typeof users)[number], month: string) =>
      rows.find((r) => Number(r.g) === u.group && Number(r.user_id) === u.userId && r.month === month);
    const real = ['london_unseen_complete', 'new_york_unseen_cancelled'];
    for (const u of users) {
      for (const month of MONTHS) {
        const difference = expectedDifference(u.placed, month);
        const r = row(u, month);
        const seen = { user: u.name, month, difference: Number(r?.orders_difference ?? 0), result: r?.result };
        if (real.includes(u.name) && month === '2026-10')
          expect(seen).toEqual({ user: u.name, month, difference: 1, result: 'differs' });
        else if (difference === 0)
          expect(seen).toEqual({ user: u.name, month, difference: 0, result: r ? 'matched' : undefined });
        else {
          expect(seen).toEqual({ user: u.name, month, difference, result: 'explained' });
          expect(r!.explanation).toMatch(/^month edge: /);
        }
      }
    }
    // every other user of the final months agrees too (the sandbox's own orders at the edges included)
    const differing = rows.filter((r) => r.result === 'differs' && r.month !== '2026-11');
    expect(differing.map((r) => `${r.g}/${r.user_id}/${r.month}`).sort()).toEqual(
      users
        .filter((u) => real.includes(u.name))
        .map((u) => `${u.group}/${u.userId}/2026-10`)
        .sort(),
    );

    // the report names what differs, by the statuses the statistics tell apart
    const report = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2026-10',
      formats: ['md'],
      revenueRule: { statuses: ['Complete'] },
    });
    const md = await readFile(report.files[0], 'utf8');
    expect(md).toMatch(/Acme Rewards Australia \(13\): the platform's statistics AGREE with our orders: /);
    const ny = users.find((u) => u.name === 'new_york_unseen_cancelled')!;
    const nyOthers = sandbox.world
      .ordersOf(12, { userId: ny.userId, from: '2026-10-01 04:00:00', to: '2026-11-01 03:59:59' })
      .filter((o) => o.status !== 'Complete' && o.created_at !== Date.parse(ny.placed[0].at));
    const byStatus = [...new Set(nyOthers.map((o) => o.status))]
      .sort()
      .map((s) => `${nyOthers.filter((o) => o.status === s).length} ${s}`)
      .join(', ');
    expect(md).toContain(
      `user ${ny.userId} (orders not Complete: platform ${nyOthers.length + 1}, ours ${nyOthers.length}${byStatus ? ` (${byStatus})` : ''})`,
    );
    const london = users.find((u) => u.name === 'london_unseen_complete')!;
    const line = new RegExp(
      `user ${london.userId} \\(Complete orders: platform (\\d+), ours (\\d+); face value platform − ours (\\d+\\.\\d\\d)\\)`,
    ).exec(md);
    expect(line, md).not.toBeNull();
    const face = sandbox.world.orders.get(indexOf({ ...london.placed[1], userId: london.userId })).face_value;
    expect([Number(line![1]) - Number(line![2]), line![3]]).toEqual([1, (face / 100).toFixed(2)]);
  });
}, 180_000);
