import { chmod, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { lakeColumns, openPartitionWrite, rewriteParquet, tightenLake } from '../../src/lake/index.js';
import { Order } from '../../src/resources/index.js';
import { tempOut } from '../support/scratch.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

/** Every entry under `root` (itself included) with its mode, as "0700 lake/orders". */
async function modesUnder(out: string, root: string): Promise<string[]> {
  const names = (await readdir(join(out, root), { recursive: true })).map(String);
  const entries = [root, ...names.map((n) => join(root, n))];
  return Promise.all(entries.map(async (e) => `${(await modeOf(join(out, e))).toString(8).padStart(4, '0')} ${e}`));
}

// The most permissive umask: whatever mode a lake entry has, the lake gave it.
let umask: number;
beforeEach(() => {
  umask = process.umask(0o000);
});
afterEach(() => {
  process.umask(umask);
});

async function landOrders(out: string, runId = 'run-1') {
  const writer = await openPartitionWrite({
    outDir: out,
    stream: 'orders',
    partition: { organisation_group_id: '11', order_date: '2026-11-02' },
    columns: lakeColumns(Order),
    runId,
    extractedAt: new Date('2026-11-03T00:00:00Z'),
    mode: 'append',
  });
  await writer.append([
    Order.parse({
      order_id: 1,
      order_status: 'complete',
      email: 'a@example.com',
      first_name: 'Ann',
      face_value: '1.00',
    }),
  ]);
  return writer.commit();
}

describe('lake file modes (personal data)', () => {
  test('under umask 000 a landed partition is 0600 in folders that are 0700 from <out>/lake down', async () => {
    const out = tempOut();
    await landOrders(out);
    const modes = await modesUnder(out, 'lake');
    expect(modes).toEqual([
      '0700 lake',
      '0700 lake/orders',
      '0700 lake/orders/organisation_group_id=11',
      '0700 lake/orders/organisation_group_id=11/order_date=2026-11-02',
      '0600 lake/orders/organisation_group_id=11/order_date=2026-11-02/part-run-1-0.parquet',
    ]);
  });

  test('a rewritten file (forgetting a user) stays 0600', async () => {
    const out = tempOut();
    const { path } = await landOrders(out);
    await chmod(path, 0o644);
    const rewritten = await rewriteParquet(out, 'orders', path, {
      select: (source) => `SELECT * REPLACE (NULL::VARCHAR AS email) FROM ${source}`,
    });
    expect(rewritten).not.toBe(path); // under a new name: a reader of the old file never has it rewritten
    expect(await modeOf(rewritten)).toBe(0o600);
  });

  test('tightening takes away the group and other bits an older version left, and follows no symbolic link', async () => {
    const out = tempOut();
    await mkdir(join(out, 'lake', 'users', 'organisation_group_id=11'), { recursive: true, mode: 0o777 });
    await writeFile(join(out, 'lake', 'users', 'organisation_group_id=11', 'part-0.parquet'), 'x', { mode: 0o644 });
    const outside = join(out, 'elsewhere.txt');
    await writeFile(outside, 'not the lake', { mode: 0o644 });
    await symlink(outside, join(out, 'lake', 'users', 'link.txt'));
    await tightenLake(out);
    expect((await modesUnder(out, 'lake')).filter((m) => !m.endsWith('link.txt'))).toEqual([
      '0700 lake',
      '0700 lake/users',
      '0700 lake/users/organisation_group_id=11',
      '0600 lake/users/organisation_group_id=11/part-0.parquet',
    ]);
    expect(await modeOf(outside)).toBe(0o644);
  });
});
