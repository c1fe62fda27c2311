/**
 * A close on a clock behind the data it freezes (a day replayed under PERKS_NOW, or a machine whose clock is
 * behind the one that extracted): every observation is counted once, in the frozen figures or as an
 * adjustment, never both. The close's instant is the newest extract its warehouse was built from.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { buildWarehouse, readBuildRecord } from '../../src/transform/index.js';
import { testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { extractAndBuild, octoberCompleteOrders, OCTOBER, TODAY } from './scenario.js';
import { join } from 'node:path';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };
const at = (time: string) => `${TODAY}T${time}Z`;

describe('a close on a clock behind the extract', () => {
  let sandbox: Sandbox;
  let out: string;
  let group: number;
  let closedAt: string;
  let lakeAt: string;

  beforeAll(async () => {
    sandbox = await testSandbox({ today: TODAY });
    out = tempOut('perks-close-behind-');
    group = sandbox.world.groups[0].id;
    setClock(clockFrom(new Date(at('12:00:00'))));
    await extractAndBuild(sandbox, out, at('12:00:00'));
    lakeAt = (await readBuildRecord(outputAt(out)))!.lastSuccess!.lakeAt!;
    setClock(clockFrom(new Date(at('11:00:00')))); // an hour behind the extract
    const [record] = await closeMonth({
      output: outputAt(out),
      month: OCTOBER,
      group,
      by: 'finance',
      force: true,
      rule: RULE,
    });
    closedAt = record.at;
  }, 600_000);

  afterAll(async () => {
    setClock(undefined);
    await sandbox?.close();
  });

  test('the close is stamped at the newest extract its figures hold, not at the clock behind it', () => {
    expect(lakeAt > at('12:00:00')).toBe(true);
    expect(closedAt).toBe(new Date(lakeAt).toISOString());
  });

  test('the next build finds nothing changed and the closed month reconciles; a real change is booked once', async () => {
    const adjustments = () =>
      query(
        join(out, 'warehouse.duckdb'),
        `SELECT order_id::INTEGER AS order_id, adjustment_kind FROM revenue_adjustments WHERE month = DATE '2026-10-01' ORDER BY ALL`,
      );
    setClock(clockFrom(new Date(at('12:30:00'))));
    const rebuilt = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
    expect(rebuilt.ok, rebuilt.error).toBe(true);
    expect(rebuilt.warnings).toEqual([]);
    expect(await adjustments()).toEqual([]);

    const [refunded] = octoberCompleteOrders(sandbox, group, 1);
    sandbox.world.orders.setStatus(refunded, 'Refunded');
    setClock(clockFrom(new Date(at('13:00:00'))));
    await extractAndBuild(sandbox, out, at('13:00:00'));
    const after = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
    expect(after.warnings).toEqual([]);
    expect(await adjustments()).toEqual([
      { order_id: sandbox.world.orders.get(refunded).order_id, adjustment_kind: 'status' },
    ]);
  });
});
