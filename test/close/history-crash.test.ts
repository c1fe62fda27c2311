/**
 * A crash between a window's order-history write and its commit loses no change: the history is committed
 * first, so the next run finds the window changed again and the adjustments hold each change once, observed
 * when the killed run first saw it. (Written the other way round, the window committed first and a kill
 * before the history write left the new window without its versions: the next run compared with it, saw
 * nothing new, and the refunds never became adjustments.)
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { runCli } from '../support/cli.js';
import { testSandbox } from '../support/sandbox.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { extractAndBuild, octoberCompleteOrders, OCTOBER, TODAY } from './scenario.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };

describe('the order history survives a crash', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await testSandbox({ today: TODAY });
  });
  afterAll(async () => {
    setClock(undefined);
    await sandbox?.close();
  });

  test("killed after a window's history is written and before the window is committed, the rerun books every refund of the closed month once", async () => {
    const out = tempOut('perks-history-crash-');
    const group = sandbox.world.groups[0].id;
    await extractAndBuild(sandbox, out, `${TODAY}T12:00:00Z`);
    setClock(clockFrom(new Date(`${TODAY}T12:30:00Z`)));
    await closeMonth({ output: outputAt(out), month: OCTOBER, group, by: 'A. Controller', rule: RULE });
    setClock(undefined);

    const refunded = octoberCompleteOrders(sandbox, group, 3);
    for (const i of refunded) sandbox.world.orders.setStatus(i, 'Refunded');
    const reread = ['extract', '--streams', 'orders', '--start-date', '2026-10-01'];
    const killed = await runCli(
      reread,
      orgEnv(sandbox, out, { PERKS_NOW: `${TODAY}T13:00:00Z`, PERKS_CRASH_AT: 'after-history' }),
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const rerun = await runCli(reread, orgEnv(sandbox, out, { PERKS_NOW: `${TODAY}T13:10:00Z` }));
    expect(rerun.code, rerun.stderr).toBe(0);

    expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
    const wh = join(out, 'warehouse.duckdb');
    const rows = await query(
      wh,
      `SELECT order_id, adjustment_kind AS kind, before_status, after_status, strftime(booked_month, '%Y-%m') AS booked
      FROM revenue_adjustments WHERE organisation_group_id = ${group} ORDER BY order_id`,
    );
    const ids = refunded.map((i) => String(sandbox.world.orders.get(i).order_id)).sort((a, b) => Number(a) - Number(b));
    expect(rows).toEqual(
      ids.map((order_id) => ({
        order_id,
        kind: 'status',
        before_status: 'Complete',
        after_status: 'Refunded',
        booked: '2026-11',
      })),
    );
    // the one the killed run saw first is observed when it saw it (its history row), not at the rerun
    const [first] = await query(
      wh,
      `SELECT count(*) AS n FROM revenue_adjustments WHERE organisation_group_id = ${group} AND observed_at >= TIMESTAMPTZ '${TODAY} 13:00:00+00' AND observed_at < TIMESTAMPTZ '${TODAY} 13:10:00+00'`,
    );
    expect(Number(first.n)).toBeGreaterThanOrEqual(1);
    // and the history shows each refunded order's Refunded version once
    const versions = await query(
      wh,
      `SELECT order_id, count(*) AS n FROM int_order_versions WHERE organisation_group_id = ${group} AND order_status = 'Refunded' AND order_id IN (${ids.join(', ')}) GROUP BY 1 ORDER BY 1`,
    );
    expect(versions).toEqual(ids.map((order_id) => ({ order_id, n: '1' })));
  }, 180_000);
});
