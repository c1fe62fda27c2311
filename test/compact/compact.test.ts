import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '../../src/extract/index.js';
import { compactLake, CompactionError, readJournal } from '../../src/compact/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { orgConfig, tempOut, truthOrders } from '../extract/helpers.js';
import { filesOf, lakeOrders, orderTotals, toLegacyLayout } from './helpers.js';

const TODAY = '2026-11-22';
const START = '2026-08-01';
const noon = new Date(`${TODAY}T12:00:00Z`);
let sandbox: Sandbox;
/** A lake of orders from START, landed once and copied per test. */
let landed: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, scale: 'tiny', seed: 11, rateLimit: 1_000_000, tokenRateLimit: 1000, today: TODAY });
  landed = tempOut('perks-compact-');
  const r = await extract(orgConfig(sandbox, landed, { PERKS_START_DATE: START }), { now: noon, streams: ['orders'] });
  expect(r.status).toBe('success');
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
});

const copyOf = (src: string) => {
  const out = tempOut('perks-compact-');
  cpSync(src, out, { recursive: true });
  return out;
};
const groups = () => sandbox.world.groups.map((g) => ({ id: g.id, timezone: g.timezone }));

describe('compaction of orders', () => {
  test('closed months become one sorted file per group and month; open days stay day files; every row is the same', async () => {
    const out = copyOf(landed);
    const before = await lakeOrders(out);
    const r = await compactLake(out, { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const nGroups = groups().length;
    // August, September, October closed; November's days (cut-off 2026-11-14) stay day files.
    expect(files.filter((f) => /month-2026-(08|09|10)\.g1\.parquet$/.test(f))).toHaveLength(3 * nGroups);
    expect(files.filter((f) => f.includes('order_month=2026-11/day-'))).toHaveLength(21 * nGroups);
    expect(files.length).toBeLessThanOrEqual(nGroups * (4 + 7 + 21));
    expect(r.streams[0]).toMatchObject({ stream: 'orders', months: 3 * nGroups, rows: before.filter((o) => o.order_date < '2026-11-01').length });
    expect(await lakeOrders(out)).toEqual(before);
    expect(before).toEqual(truthOrders(sandbox, groups(), START, TODAY));
    expect(readJournal(out)).toEqual({ generation: 2 * 3 * nGroups, switching: null });
  });

  test('compacting twice is compacting once', async () => {
    const out = copyOf(landed);
    await compactLake(out, { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const rows = await lakeOrders(out);
    const again = await compactLake(out, { lookbackDays: 7, now: noon });
    expect(again.streams[0]).toMatchObject({ months: 0, days: 0, filesBefore: files.length, filesAfter: files.length });
    expect(filesOf(out, 'orders')).toEqual(files);
    expect(await lakeOrders(out)).toEqual(rows);
  });

  test('a lake of the legacy layout (the day in the path) moves over: closed months compacted, open days into month folders', async () => {
    const out = copyOf(landed);
    const before = await lakeOrders(out);
    await toLegacyLayout(out);
    expect(filesOf(out, 'orders').every((f) => f.includes('/order_date='))).toBe(true);
    expect(await lakeOrders(out)).toEqual(before);
    const novemberDays = filesOf(out, 'orders').filter((f) => f.includes('/order_date=2026-11-')).length;
    const r = await compactLake(out, { lookbackDays: 7, now: noon });
    expect(novemberDays).toBeGreaterThan(0);
    expect(r.streams[0].days).toBe(novemberDays);
    expect(filesOf(out, 'orders').some((f) => f.includes('order_date='))).toBe(false);
    expect(await lakeOrders(out)).toEqual(before);
  });

  test('a file that cannot be read leaves its month as it was and says so in one line; the other months are compacted', async () => {
    const out = copyOf(landed);
    const bad = filesOf(out, 'orders').find((f) => f.includes('order_month=2026-09/day-2026-09-14'))!;
    writeFileSync(join(out, 'lake', 'orders', bad), 'not parquet at all');
    const september = filesOf(out, 'orders').filter((f) => f.startsWith(bad.split('/')[0]) && f.includes('order_month=2026-09/'));
    const err = await compactLake(out, { lookbackDays: 7, now: noon }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompactionError);
    expect((err as Error).message).not.toContain('\n');
    expect((err as Error).message).toMatch(/month 2026-09: .*day-2026-09-14\.parquet cannot be read/);
    expect(filesOf(out, 'orders').filter((f) => f.startsWith(bad.split('/')[0]) && f.includes('order_month=2026-09/'))).toEqual(september);
    expect(filesOf(out, 'orders').filter((f) => f.includes('month-2026-10'))).toHaveLength(groups().length);
  });
});
