/**
 * A model built by months that reads the months either side (reconciliation_platform's `edges:`): an order changed
 * on a month's last local day dirties the next month too, and the incremental build equals a full one
 * (--verify-incremental builds the same lake whole and compares every table).
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { USER_STATUS } from '../../src/sandbox/choices.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const intervals = (b: BuildResult, model: string) => b.steps.find((s) => s.name === model)!.intervals!;

test("an order refunded on 30 September in New York (1 October in UTC) rebuilds October's reconciliation too, as a full build would", async () => {
  await withSandbox({ today: TODAY }, async (sandbox) => {
    // two New York users with no other order near October's edges: the evening of 30 September is 1 October in UTC
    const [user, other] = sandbox.world.users
      .inGroup(12)
      .filter(
        (u) =>
          u.status === USER_STATUS.active &&
          u.created_at < Date.parse('2026-08-01T00:00:00Z') &&
          sandbox.world.ordersOf(12, { userId: u.id, from: '2026-09-28 00:00:00', to: '2026-10-03 00:00:00' })
            .length === 0,
      );
    const at = '2026-09-30T23:30:00-04:00';
    sandbox.world.placeOrder(12, at, user.id, 'Complete');
    sandbox.world.placeOrder(12, '2026-09-30T22:00:00-04:00', other.id, 'Complete');
    const out = tempOut('perks-incremental-edges-');
    const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-09-01', PERKS_GROUP_IDS: '12' });
    const now = new Date(`${TODAY}T12:00:00Z`);
    expect(
      (await extract(config, { output: outputAt(out), now, streams: ['orders', 'redemption_stats'] })).status,
    ).toBe('success');
    expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
    const wh = join(out, 'warehouse.duckdb');
    const october = async (id = user.id) =>
      (
        await query(
          wh,
          `SELECT platform_egift_orders, lake_complete_orders, result FROM reconciliation_platform
          WHERE organisation_group_id = 12 AND user_id = ${id} AND month = DATE '2026-10-01'`,
        )
      )[0];
    // the platform counts it in October, the lake holds it on 30 September: explained by the month's edge
    const before = await october();
    expect(before.result).toBe('explained');

    // refunded upstream; only 30 September is read again (the statistics are not): October's statistics still
    // count it as Complete, which the lake's orders no longer explain
    const store = sandbox.world.orders;
    const i = store.lowerBound(Date.parse(at));
    expect(store.user[i]).toBe(user.id);
    store.setStatus(i, 'Refunded');
    const reread = await extract(config, {
      output: outputAt(out),
      now,
      streams: ['orders'],
      startDate: '2026-09-30',
      endDate: '2026-10-01',
    });
    expect(reread.status).toBe('success');
    const b = await buildWarehouse({ output: outputAt(out), asOf: TODAY, verifyIncremental: true });
    expect(b.ok, b.error).toBe(true);
    expect(b.steps.find((s) => s.name === 'verify incremental')?.status).toBe('success');
    // September's orders alone changed, and October's rows were rebuilt for it, not the whole mart
    expect(intervals(b, 'stg_orders')).toMatchObject({ rebuilt: 1 });
    expect(intervals(b, 'reconciliation_platform').whole).toBeUndefined();
    expect(intervals(b, 'reconciliation_platform').rebuilt).toBeGreaterThanOrEqual(2);
    expect(await october()).toEqual({ ...before, result: 'differs' });

    // an October order of someone else refunded and its day read again: October is rebuilt for its own orders, and
    // still sees the orders of 30 September that explain the other user's row
    const j = store.lowerBound(Date.parse('2026-10-15T12:00:00Z'));
    const refunded = [...Array(store.count - j).keys()]
      .map((k) => j + k)
      .find(
        (k) => store.group[k] === 1 && store.statusOf(k) === 'Complete' && ![user.id, other.id].includes(store.user[k]),
      )!;
    store.setStatus(refunded, 'Refunded');
    const day = new Date(store.createdAt[refunded] - 4 * 3_600_000).toISOString().slice(0, 10);
    expect(day < '2026-11-01').toBe(true);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(
      (await extract(config, { output: outputAt(out), now, streams: ['orders'], startDate: day, endDate: next }))
        .status,
    ).toBe('success');
    const c = await buildWarehouse({ output: outputAt(out), asOf: TODAY, verifyIncremental: true });
    expect(c.ok, c.error).toBe(true);
    expect(intervals(c, 'stg_orders')).toMatchObject({ rebuilt: 1 });
    expect((await october(other.id)).result).toBe('explained');
  });
}, 120_000);
