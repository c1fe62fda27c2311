import { beforeAll, describe, expect, test } from 'vitest';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '../../src/extract/index.js';
import { compactLake, CompactionError, readJournal } from '../../src/compact/index.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { lakeOrders, truthOrders } from '../support/lake-check.js';
import { filesOf, layoutOf, toLegacyLayout } from './helpers.js';
import { forgetUsers } from '../../src/forget/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const START = '2026-08-01';
const noon = new Date(`${TODAY}T12:00:00Z`);
const sandbox = sandboxForFile({ seed: 11, today: TODAY });
/** A lake of orders from START, landed once and copied per test. */
let landed: string;
let landedRun: string;

beforeAll(async () => {
  landed = tempOut('perks-compact-');
  const r = await extract(orgConfig(sandbox(), landed, { PERKS_START_DATE: START }), {
    output: outputAt(landed),
    now: noon,
    streams: ['orders'],
  });
  expect(r.status).toBe('success');
  landedRun = r.runId;
}, 300_000);

const copyOf = (src: string) => {
  const out = tempOut('perks-compact-');
  cpSync(src, out, { recursive: true });
  return out;
};
const groups = () => sandbox().world.groups.map((g) => ({ id: g.id, timezone: g.timezone }));

describe('compaction of orders', () => {
  test('closed months become one sorted file per group and month; the open month up to the lookback too; every row is the same', async () => {
    const out = copyOf(landed);
    const before = await lakeOrders(out);
    const r = await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const nGroups = groups().length;
    // August, September, October closed; November up to the 14th (the state's watermark, the 22nd, minus the
    // 7 lookback days: the first day a run re-reads is the 15th), then day files.
    expect(files.filter((f) => /month-2026-(08|09|10)\.g1\.v[0-9a-f]+\.parquet$/.test(f))).toHaveLength(3 * nGroups);
    expect(files.filter((f) => /month-2026-11\.upto-2026-11-14\.g1\.v[0-9a-f]+\.parquet$/.test(f))).toHaveLength(
      nGroups,
    );
    expect(files.filter((f) => f.includes('order_month=2026-11/day-'))).toHaveLength(7 * nGroups);
    expect(files.length).toBeLessThanOrEqual(nGroups * (4 + 7));
    expect(r.streams[0]).toMatchObject({
      stream: 'orders',
      months: 4 * nGroups,
      rows: before.filter((o) => o.order_date < '2026-11-15').length,
    });
    expect(await lakeOrders(out)).toEqual(before);
    expect(before).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
    // The order history (appended batches) too: its closed months one file each; November's batches wait for the month to close.
    const history = filesOf(out, 'order_versions');
    expect(
      history.filter((f) => /order_month=2026-(08|09|10)\/month-2026-(08|09|10)\.g1\.v[0-9a-f]+\.parquet$/.test(f)),
    ).toHaveLength(3 * nGroups);
    expect(history.filter((f) => /order_month=2026-(08|09|10)\//.test(f))).toHaveLength(3 * nGroups);
    expect(r.streams.find((x) => x.stream === 'order_versions')).toMatchObject({
      months: 3 * nGroups,
      rows: before.filter((o) => o.order_date < '2026-11-01').length,
    });
    expect(readJournal(out)).toEqual({ generation: 2 * (4 + 3) * nGroups, switching: null });
    // With a shorter lookback the 15th is settled too: it joins the month file, whose next generation covers it.
    await compactLake(outputAt(out), { lookbackDays: 6, now: noon });
    expect(
      filesOf(out, 'orders').filter((f) => /month-2026-11\.upto-2026-11-15\.g2\.v[0-9a-f]+\.parquet$/.test(f)),
    ).toHaveLength(nGroups);
    expect(filesOf(out, 'orders').filter((f) => f.includes('order_month=2026-11/day-'))).toHaveLength(6 * nGroups);
    expect(await lakeOrders(out)).toEqual(before);
  });

  test('compacting twice is compacting once', async () => {
    const out = copyOf(landed);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const rows = await lakeOrders(out);
    const again = await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
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
    const novemberDays = filesOf(out, 'orders').filter((f) => /\/order_date=2026-11-(1[5-9]|2)/.test(f)).length;
    const r = await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    expect(novemberDays).toBeGreaterThan(0);
    expect(r.streams[0].days).toBe(novemberDays);
    expect(filesOf(out, 'orders').some((f) => f.includes('order_date='))).toBe(false);
    expect(await lakeOrders(out)).toEqual(before);
  });

  test('a file that cannot be read leaves its month as it was and says so in one line; the other months are compacted', async () => {
    const out = copyOf(landed);
    const bad = filesOf(out, 'orders').find((f) => f.includes('order_month=2026-09/day-2026-09-14'))!;
    writeFileSync(join(out, 'lake', 'orders', bad), 'not parquet at all');
    const september = filesOf(out, 'orders').filter(
      (f) => f.startsWith(bad.split('/')[0]) && f.includes('order_month=2026-09/'),
    );
    const err = await compactLake(outputAt(out), { lookbackDays: 7, now: noon }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompactionError);
    expect((err as Error).message).not.toContain('\n');
    expect((err as Error).message).toMatch(/month 2026-09: .*day-2026-09-14\.v[0-9a-f]+\.parquet cannot be read/);
    expect(
      filesOf(out, 'orders').filter((f) => f.startsWith(bad.split('/')[0]) && f.includes('order_month=2026-09/')),
    ).toEqual(september);
    expect(filesOf(out, 'orders').filter((f) => f.includes('month-2026-10'))).toHaveLength(groups().length);
  });

  test('a backfill of days inside a compacted month replaces their rows in the month file, next to the lookback day files', async () => {
    const out = copyOf(landed);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const r = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon,
      streams: ['orders'],
      startDate: '2026-09-10',
      endDate: '2026-09-13',
    });
    expect(r.status).toBe('success');
    // The same layout; September's month files are each a new file (three days merged: three generations on).
    expect(layoutOf(filesOf(out, 'orders'))).toEqual(layoutOf(files));
    const september = filesOf(out, 'orders').filter((f) => f.includes('order_month=2026-09/'));
    expect(september.every((f) => /month-2026-09\.g4\.v[0-9a-f]+\.parquet$/.test(f) && !files.includes(f))).toBe(true);
    expect(await lakeOrders(out)).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
    const runs = await runsByDay(out, '2026-09-01', '2026-10-01');
    for (const [day, ids] of runs)
      expect(ids, day).toEqual(day >= '2026-09-10' && day < '2026-09-13' ? [r.runId] : [landedRun]);
  });

  test('a window re-read across the cut-off: settled days merge into the open month file, lookback days replace their day files', async () => {
    const out = copyOf(landed);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const r = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon,
      streams: ['orders'],
      startDate: '2026-11-10',
      endDate: '2026-11-20',
    });
    expect(r.status).toBe('success');
    expect(layoutOf(filesOf(out, 'orders'))).toEqual(layoutOf(files));
    expect(await lakeOrders(out)).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
    const runs = await runsByDay(out, '2026-11-01', '2026-11-22');
    for (const [day, ids] of runs)
      expect(ids, day).toEqual(day >= '2026-11-10' && day < '2026-11-20' ? [r.runId] : [landedRun]);
  });

  test('a damaged compacted month file is healed by the next extract: its days land again as day files, then it goes', async () => {
    const out = copyOf(landed);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const g = groups()[0].id;
    const month = join(
      out,
      'lake',
      'orders',
      filesOf(out, 'orders').find((f) => f.startsWith(`organisation_group_id=${g}/order_month=2026-09/month-`))!,
    );
    writeFileSync(month, 'not parquet any more');
    const r = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon,
      streams: ['orders'],
    });
    expect(r.status).toBe('success');
    const notes = r.streams
      .find((x) => x.name === 'orders')!
      .groups.find((x) => x.group === g)!
      .notes.join('\n');
    expect(notes).toMatch(/re-extracting 30 windows whose lake file was damaged: 2026-09-01, /);
    expect(notes).toMatch(
      /removed 1 damaged month file, its days landed again: lake\/orders\/organisation_group_id=\d+\/order_month=2026-09\/month-2026-09\.g1\.v[0-9a-f]+\.parquet/,
    );
    const september = filesOf(out, 'orders').filter((f) =>
      f.startsWith(`organisation_group_id=${g}/order_month=2026-09/`),
    );
    expect(september).toHaveLength(30);
    expect(september.every((f) => /day-2026-09-\d\d\.v[0-9a-f]+\.parquet$/.test(f))).toBe(true);
    expect(await lakeOrders(out)).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
    // The next compaction makes the month one file again.
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const healed = filesOf(out, 'orders').filter((f) =>
      f.startsWith(`organisation_group_id=${g}/order_month=2026-09/`),
    );
    expect(layoutOf(healed)).toEqual([`organisation_group_id=${g}/order_month=2026-09/month-2026-09.g*.parquet`]);
    expect(healed).not.toContain(month.slice(join(out, 'lake', 'orders').length + 1)); // never the damaged file's name
    expect(await lakeOrders(out)).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
  });

  test('a full refresh over a compacted lake holds every order once, in the same layout', async () => {
    const out = copyOf(landed);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    const files = filesOf(out, 'orders');
    const r = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon,
      streams: ['orders'],
      fullRefresh: true,
    });
    expect(
      r.status,
      r.streams
        .map((s) => s.error)
        .filter(Boolean)
        .join('; '),
    ).toBe('success');
    expect(layoutOf(filesOf(out, 'orders'))).toEqual(layoutOf(files));
    const lake = await lakeOrders(out);
    expect(lake).toEqual(truthOrders(sandbox(), groups(), START, TODAY));
    expect(new Set(lake.map((o) => `${o.group}/${o.order_id}`)).size).toBe(lake.length);
    expect((await compactLake(outputAt(out), { lookbackDays: 7, now: noon })).streams[0].months).toBe(0);
  });
});

describe('erasure and compaction', () => {
  test('forgetting a user clears compacted month files too, and no later compaction brings a value back', async () => {
    const out = tempOut('perks-compact-');
    const r = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: noon,
      streams: ['users', 'orders'],
    });
    expect(r.status).toBe('success');
    await toLegacyLayout(out);
    // One user forgotten before compaction (legacy day files), one after (compacted month files).
    const [first, second] = await usersWithOrdersIn(out, '2026-08-01', '2026-10-01');
    await forgetUsers(outputAt(out), [first.id]);
    await compactLake(outputAt(out), { lookbackDays: 7, now: noon });
    expect(filesOf(out, 'orders').some((f) => f.includes('month-2026-08'))).toBe(true);
    const forgot = await forgetUsers(outputAt(out), [second.id]);
    expect(forgot.streams.orders.files).toBeGreaterThan(0);
    await compactLake(outputAt(out), { lookbackDays: 7, now: new Date('2027-01-15T12:00:00Z') }); // November closes too
    for (const u of [first, second]) expect(await ordersWithEmail(out, u.email)).toBe(0);
    expect(
      await ordersWithEmail(out, (await usersWithOrdersIn(out, '2026-08-01', '2026-10-01'))[0].email),
    ).toBeGreaterThan(0);
  });
});

async function runsByDay(out: string, from: string, to: string): Promise<Map<string, string[]>> {
  return withLakeConnection(async (c) => {
    const rows = await c.runAndReadAll(
      `SELECT order_date::VARCHAR AS d, list(DISTINCT _run_id ORDER BY _run_id) AS runs FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)
       WHERE order_date >= $from::DATE AND order_date < $to::DATE GROUP BY ALL ORDER BY d`,
      { glob: join(out, 'lake', 'orders', '**', '*.parquet'), from, to },
    );
    return new Map((rows.getRowObjectsJS() as { d: string; runs: string[] }[]).map((x) => [x.d, x.runs]));
  });
}

async function usersWithOrdersIn(out: string, from: string, to: string): Promise<{ id: number; email: string }[]> {
  return withLakeConnection(async (c) => {
    const rows = await c.runAndReadAll(
      `SELECT DISTINCT u.id::BIGINT AS id, lower(u.email) AS email
       FROM read_parquet($users, hive_partitioning = true, union_by_name = true) u
       JOIN read_parquet($orders, hive_partitioning = true, union_by_name = true) o ON lower(o.email) = lower(u.email)
       WHERE o.order_date >= $from::DATE AND o.order_date < $to::DATE ORDER BY id LIMIT 3`,
      {
        users: join(out, 'lake', 'users', '**', '*.parquet'),
        orders: join(out, 'lake', 'orders', '**', '*.parquet'),
        from,
        to,
      },
    );
    return (rows.getRowObjectsJS() as { id: bigint; email: string }[]).map((x) => ({
      id: Number(x.id),
      email: x.email,
    }));
  });
}

async function ordersWithEmail(out: string, email: string): Promise<number> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT count(*)::BIGINT AS n FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) WHERE lower(email) = $email`,
      { glob: join(out, 'lake', 'orders', '**', '*.parquet'), email },
    );
    return Number(r.getRowObjectsJS()[0].n);
  });
}
