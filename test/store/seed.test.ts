/**
 * Issue 42: the store keeps the warehouse in pieces (`seed/`, src/transform/warehouse/seed.ts), never as one
 * `warehouse.duckdb` object uploaded whole after every build. A fresh working copy assembles the same
 * warehouse from them (tables, types, views); the next day's build uploads only the pieces whose rows changed.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { compareWarehouses } from '../../src/transform/index.js';
import { s3Client } from '../support/s3.js';
import { storeWorldForFile } from '../support/store-file.js';

const { world, sandbox } = storeWorldForFile(44);

/** The working copy's warehouse on a machine (its folder is named by the store's URL). */
function warehouseOn(machine: string): string {
  const found = readdirSync(machine, { recursive: true, encoding: 'utf8' }).find((p) => p.endsWith('warehouse.duckdb'));
  if (!found) throw new Error(`no warehouse.duckdb under ${machine}`);
  return join(machine, found);
}

/** Each seed piece the store's index names → the object key it is at. */
async function seedPieces(prefix: string): Promise<Map<string, string>> {
  const index = (await world().index(prefix))!;
  return new Map(
    Object.entries(index.files)
      .filter(([p]) => p.startsWith('seed/'))
      .map(([p, e]) => [p, e.key]),
  );
}

test('the warehouse is kept as pieces that change with the data: a fresh copy assembles the same warehouse, and the next day moves only the pieces that changed', async () => {
  const sb = await sandbox();
  const env = (machine: string, extra: Record<string, string> = {}) => world().env(sb, 'seed', machine, extra);
  const a = world().machine();
  const first = await world().perks(['run', '--no-writeback'], env(a));
  expect(first.code, first.stderr).toBe(0);

  const objects = await world().objects('seed');
  expect(objects.has('warehouse.duckdb'), 'the whole file is never uploaded').toBe(false);
  const day0 = await seedPieces('seed');
  expect(day0.has('seed/_seed.json')).toBe(true);
  const months = [...day0.keys()].filter((p) => /^seed\/stg_orders\/\d{4}-\d{2}\.parquet$/.test(p));
  expect(months.length, 'stg_orders kept by month').toBeGreaterThan(3);
  expect(day0.has('seed/dim_groups.parquet')).toBe(true);

  // a fresh copy reads what was built: its warehouse, assembled from the pieces, is the one machine A built
  const b = world().machine();
  const query = 'SELECT count(*) AS n FROM stg_orders';
  const fresh = await world().perks(['sql', query, '--format', 'json'], env(b));
  const original = await world().perks(['sql', query, '--format', 'json'], env(a));
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(fresh.stdout).toBe(original.stdout);
  const scratch = mkdtempSync(join(tmpdir(), 'perks-seed-compare-'));
  try {
    const differences = await compareWarehouses(warehouseOn(a), warehouseOn(b), {
      memoryLimit: '1GB',
      spillDirectory: join(scratch, 'spill'),
    });
    expect(differences).toEqual([]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }

  // a build that changes only the segments' windows moves only the tables they feed: every month kept
  const segments = await world().perks(['build', '--active-days', '10'], env(a));
  expect(segments.code, segments.stderr).toBe(0);
  const resegmented = await seedPieces('seed');
  expect(months.filter((p) => resegmented.get(p) !== day0.get(p))).toEqual([]);
  expect(resegmented.get('seed/dim_groups.parquet'), 'an unchanged table keeps its object').toBe(
    day0.get('seed/dim_groups.parquet'),
  );
  expect(resegmented.get('seed/engagement_users.parquet')).not.toBe(day0.get('seed/engagement_users.parquet'));

  // the next day: the pieces that move are the ones the build wrote, no more
  sb.advance(1);
  const next = await world().perks(['run', '--no-writeback'], env(a));
  expect(next.code, next.stderr).toBe(0);
  const day1 = await seedPieces('seed');
  const written = Number(/seed: (\d+) files written, (\d+) kept/.exec(next.stdout)?.[1]);
  const kept = Number(/seed: (\d+) files written, (\d+) kept/.exec(next.stdout)?.[2]);
  const pieces = (m: Map<string, string>) => [...m.keys()].filter((p) => !/(_seed|_perks_build)\.json$/.test(p));
  const moved = pieces(day1).filter((p) => day1.get(p) !== resegmented.get(p));
  expect(moved.length).toBe(written);
  expect(pieces(day1).length - moved.length).toBe(kept);
  expect(kept, 'pieces the day did not change').toBeGreaterThan(0);

  // machine B, a day behind, builds from the newer pieces: its warehouse is assembled again before the build
  const behind = await world().perks(['build'], env(b));
  expect(behind.code, behind.stderr).toBe(0);
  expect(statSync(warehouseOn(b)).size).toBeGreaterThan(0);
  const after = await world().perks(['sql', query, '--format', 'json'], env(b));
  const onA = await world().perks(['sql', query, '--format', 'json'], env(a));
  expect(after.stdout).toBe(onA.stdout);
}, 300_000);

test('a store published before the seed: its whole warehouse.duckdb leaves the store at the next publish', async () => {
  const sb = await sandbox();
  const env = (machine: string) => world().env(sb, 'legacy', machine);
  const a = world().machine();
  const first = await world().perks(['run', '--no-writeback'], env(a));
  expect(first.code, first.stderr).toBe(0);
  // as an earlier version published it: the warehouse under its own name, named by the index
  const body = Buffer.from('a warehouse of an earlier version');
  const client = s3Client(world().s3);
  const bucket = world().s3.bucket;
  const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'legacy/warehouse.duckdb', Body: body }));
  const index = (await world().index('legacy'))! as unknown as { files: Record<string, unknown> };
  index.files['warehouse.duckdb'] = {
    key: 'warehouse.duckdb',
    size: body.length,
    etag: put.ETag,
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  await client.send(
    new PutObjectCommand({ Bucket: bucket, Key: 'legacy/_perks/index.json', Body: JSON.stringify(index) }),
  );
  client.destroy();

  const next = await world().perks(['build', '--active-days', '10'], env(world().machine()));
  expect(next.code, next.stderr).toBe(0);
  expect((await world().index('legacy'))!.files['warehouse.duckdb']).toBeUndefined();
  expect((await world().objects('legacy')).has('warehouse.duckdb')).toBe(false);
}, 300_000);
