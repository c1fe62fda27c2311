/**
 * stg_orders built by months, on the hand-written lake (real Parquet files, real DuckDB): the two questions
 * its incremental build asks of the clean months' files: which of them hold an order of an email whose user
 * changed (a lookup), and whether a key rebuilt is also in a clean month. Each build with
 * --verify-incremental: equal to a full build of the same lake.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { join } from 'node:path';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { ANONYMISED, LakeWriter, order, user, writeFixtureLake } from './fixture-lake.js';
import { outputAt } from '../../src/output/index.js';

const AS_OF = '2026-04-01';
let out: string;
let lake: LakeWriter;

beforeAll(async () => {
  out = await writeFixtureLake();
  lake = await LakeWriter.create(out);
  const first = await build();
  expect(first.steps.find((s) => s.name === 'stg_orders')!.intervals!.whole).toBe('no earlier build of it');
});
afterAll(() => {
  lake.close();
  rmSync(out, { recursive: true, force: true });
});

async function build(): Promise<BuildResult> {
  const b = await buildWarehouse({ output: outputAt(out), asOf: AS_OF, verifyIncremental: true });
  expect(b.error).toBeUndefined();
  expect(b.steps.find((s) => s.name === 'verify incremental')?.status).toBe('success');
  return b;
}

const stgOrders = (b: BuildResult) => b.steps.find((s) => s.name === 'stg_orders')!.intervals!;

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(join(out, 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

const userOf = async (orderId: number) =>
  (await query(`SELECT user_id FROM stg_orders WHERE order_id = ${orderId}`))[0].user_id as string | null;

/** The lake folders (`<group>/<YYYY-MM>`) whose rows' lookup keys the warehouse keeps (lookups.ts). */
const indexedFolders = async () =>
  (
    await query(
      `SELECT DISTINCT CAST(g AS VARCHAR) || '/' || strftime(pm, '%Y-%m') AS folder FROM _build_lookup_rows_stg_orders ORDER BY 1`,
    )
  ).map((r) => r.folder);

test('a new user whose email an order of a clean month holds: that month alone is rebuilt, and the order is hers', async () => {
  // order 104 (March, group 11) was placed with the anonymised user's email, which no current user holds
  expect(await userOf(104)).toBeNull();
  // a build with nothing new: the emails are not computed, the lookup's keys are the first build's (copied)
  const rerun = await build();
  expect(rerun.steps.find((s) => s.name === 'stg_user_emails')?.deferred).toBe(true);
  expect(stgOrders(rerun)).toMatchObject({ rebuilt: 0 });
  await lake.file(
    'users',
    { organisation_group_id: 11, _snapshot_date: '2026-03-31' },
    'part-9.parquet',
    '2026-03-31T04:00:00Z',
    [user(9, '2026-03-31T03:30:00Z', { email: ` ${ANONYMISED.email.toUpperCase()}` })],
  );
  const b = await build();
  expect(stgOrders(b).whole).toBeUndefined();
  expect(stgOrders(b).rebuilt).toBe(1); // group 11's March: no lake file of it changed
  expect(await userOf(104)).toBe('9');
});

test('a key landed in a dirty month that a clean month also holds: the model is built whole, as a full build decides across them', async () => {
  // order 105 is in group 11's February; a window landed under January lists it too
  await lake.file(
    'orders',
    { organisation_group_id: 11, order_date: '2026-01-31' },
    'part-0.parquet',
    '2026-03-31T05:00:00Z',
    [order(105, 'bob@example.com', 'GBP', [15, 15, 0, 0, 0.45], { order_status: 'Refunded' })],
  );
  const b = await build();
  expect(stgOrders(b).whole).toBe(
    'a key of a dirty interval is also in a clean one of lake_orders (fell back to a whole build)',
  );
  // the same lake again: nothing dirty, the index is as fresh as the files
  const again = await build();
  expect(stgOrders(again)).toMatchObject({ rebuilt: 0 });
});

test('the lookup keys of a month whose files changed are read again: a user who arrives after her order lands gets it', async () => {
  // an order of group 11's March lands with an email no user holds: that month is rebuilt (its files
  // changed), the order unattributed; the keys of March's rows as indexed by the first test are out of date
  await lake.file(
    'orders',
    { organisation_group_id: 11, order_date: '2026-03-20' },
    'part-0.parquet',
    '2026-03-31T06:00:00Z',
    [order(106, 'dana@example.com', 'GBP', [12, 12, 0, 0, 0.36])],
  );
  expect(await indexedFolders()).toContain('11/2026-03');
  const landed = await build();
  expect(stgOrders(landed).whole).toBeUndefined();
  expect(stgOrders(landed).rebuilt).toBe(1);
  expect(await userOf(106)).toBeNull();
  // the keys read from March's old files are gone with them (no hash outlives the rows it was read from)
  expect(await indexedFolders()).not.toContain('11/2026-03');
  // then her user: March is read again for its keys (not the index kept from before), and rebuilt alone
  await lake.file(
    'users',
    { organisation_group_id: 11, _snapshot_date: '2026-03-31' },
    'part-10.parquet',
    '2026-03-31T07:00:00Z',
    [user(10, '2026-03-31T06:30:00Z', { email: 'Dana@example.com' })],
  );
  const arrived = await build();
  expect(stgOrders(arrived).whole).toBeUndefined();
  expect(stgOrders(arrived).rebuilt).toBe(1);
  expect(await userOf(106)).toBe('10');
  expect(await indexedFolders()).toContain('11/2026-03');
});
