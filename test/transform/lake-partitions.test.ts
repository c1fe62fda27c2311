/** A stream's group-months and their fingerprints, from the folders alone (what an incremental build compares). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { monthPartitions } from '../../src/transform/sources/lake-partitions.js';

let out: string;
afterEach(() => rmSync(out, { recursive: true, force: true }));

const file = (path: string, bytes = 'x') => {
  const full = join(out, 'lake', 'orders', path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, bytes);
};

test('a group-month is its files: a file landed under a new name changes its fingerprint, the others keep theirs', () => {
  out = mkdtempSync(join(tmpdir(), 'perks-parts-'));
  file('organisation_group_id=1/order_month=2026-03/day-2026-03-01.v1.parquet');
  file('organisation_group_id=1/order_month=2026-04/day-2026-04-01.v1.parquet');
  // the earlier layout: a day folder counts for its month
  file('organisation_group_id=2/order_date=2026-04-02/part-0.parquet');
  const before = monthPartitions(out, 'orders')!;
  expect([...before.keys()].sort()).toEqual(['1/2026-03', '1/2026-04', '2/2026-04']);
  expect(before.get('2/2026-04')!.files).toEqual([
    'lake/orders/organisation_group_id=2/order_date=2026-04-02/part-0.parquet',
  ]);
  rmSync(join(out, 'lake/orders/organisation_group_id=1/order_month=2026-04/day-2026-04-01.v1.parquet'));
  file('organisation_group_id=1/order_month=2026-04/day-2026-04-01.v2.parquet');
  const after = monthPartitions(out, 'orders')!;
  expect(after.get('1/2026-04')!.fingerprint).not.toBe(before.get('1/2026-04')!.fingerprint);
  expect(after.get('1/2026-03')!.fingerprint).toBe(before.get('1/2026-03')!.fingerprint);
  expect(after.get('2/2026-04')!.fingerprint).toBe(before.get('2/2026-04')!.fingerprint);
});

test('a Parquet file outside the group and month folders makes the stream unreadable by intervals (built whole)', () => {
  out = mkdtempSync(join(tmpdir(), 'perks-parts-'));
  file('organisation_group_id=1/order_month=2026-03/day-2026-03-01.v1.parquet');
  expect(monthPartitions(out, 'orders')).not.toBeNull();
  file('organisation_group_id=1/stray.parquet');
  expect(monthPartitions(out, 'orders')).toBeNull();
  rmSync(join(out, 'lake/orders/organisation_group_id=1/stray.parquet'));
  file('organisation_group_id=1/order_month=2026-03/nested/x.parquet');
  expect(monthPartitions(out, 'orders')).toBeNull();
});

test("every month layout's keys are group-months (credit's _snapshot_month), another stream's key is no shape of its own", () => {
  out = mkdtempSync(join(tmpdir(), 'perks-parts-'));
  const land = (stream: string, path: string) => {
    mkdirSync(join(out, 'lake', stream, path, '..'), { recursive: true });
    writeFileSync(join(out, 'lake', stream, path), 'x');
  };
  land('credit', 'organisation_group_id=7/_snapshot_month=2026-05/part-r1-0.parquet');
  land('credit', 'organisation_group_id=7/_snapshot_month=2026-06/part-r2-0.parquet');
  const credit = monthPartitions(out, 'credit')!;
  expect([...credit.keys()].sort()).toEqual(['7/2026-05', '7/2026-06']);
  expect(credit.get('7/2026-06')!.files).toEqual([
    'lake/credit/organisation_group_id=7/_snapshot_month=2026-06/part-r2-0.parquet',
  ]);
  land('orders', 'organisation_group_id=7/_snapshot_month=2026-05/part-r1-0.parquet');
  expect(monthPartitions(out, 'orders')).toBeNull();
});
