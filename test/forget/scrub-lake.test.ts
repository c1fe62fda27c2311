/**
 * forgetUsers over lake files whose columns differ (an older snapshot without a column a later one has, a file
 * with no personal column left to clear): which files hold the user is asked of each stream's files at once,
 * read by name across them, and must find what each file's own columns would find.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { forgetUsers } from '../../src/forget/forget.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';
import { readStream } from '../lake/helpers.js';
import { outputAt } from '../../src/output/index.js';

/** A lake file `lake/<stream>/organisation_group_id=1/<name>` holding the rows of `select`. */
async function lakeFile(out: string, stream: string, name: string, select: string): Promise<void> {
  const dir = join(out, 'lake', stream, 'organisation_group_id=1');
  mkdirSync(dir, { recursive: true });
  await withLakeConnection((c) => c.run(`COPY (${select}) TO '${join(dir, name)}' (FORMAT parquet)`));
}

test('a user is cleared in every file that holds them, whatever columns each file has; the other files are not touched', async () => {
  const out = tempOut();
  // the latest snapshot (alt_uid, _extra) shows user 7 anonymised; an older one (neither column) still holds them
  await lakeFile(
    out,
    'users',
    'day-2026-11-02.va.parquet',
    `SELECT * FROM (VALUES (7, NULL, NULL, NULL, NULL, NULL, DATE '2026-11-02'), (8, 'b@x.io', 'Bo', 'Lind', 'B8', '{"p":1}', DATE '2026-11-02'))
       AS t(id, email, first_name, last_name, alt_uid, _extra, _snapshot_date)`,
  );
  await lakeFile(
    out,
    'users',
    'day-2026-11-01.va.parquet',
    `SELECT * FROM (VALUES (7, 'A@x.io ', 'Ann', 'Berg', DATE '2026-11-01'), (9, 'c@x.io', 'Cy', 'Dahl', DATE '2026-11-01'))
       AS t(id, email, first_name, last_name, _snapshot_date)`,
  );
  // orders name no user: found by the email (its key: trimmed, lower case); one file has no _extra
  await lakeFile(
    out,
    'orders',
    'day-2026-11-01.va.parquet',
    `SELECT * FROM (VALUES (100, 'a@x.io', 'Ann', 'Berg', '{"phone":"1"}'), (101, 'c@x.io', 'Cy', 'Dahl', NULL))
       AS t(order_id, email, first_name, last_name, _extra)`,
  );
  await lakeFile(
    out,
    'orders',
    'day-2026-11-02.va.parquet',
    `SELECT * FROM (VALUES (102, 'A@X.IO', 'Ann', 'Berg')) AS t(order_id, email, first_name, last_name)`,
  );
  await lakeFile(out, 'orders', 'day-2026-11-03.va.parquet', `SELECT 103 AS order_id, 'b@x.io' AS email`);
  // the order history is found by the ids of the user's orders
  await lakeFile(
    out,
    'order_versions',
    'day-2026-11-02.va.parquet',
    `SELECT * FROM (VALUES (100, '{"n":1}'), (101, '{"n":2}'), (102, NULL)) AS t(order_id, _extra)`,
  );
  const before = filesUnder(join(out, 'lake'));

  const result = await forgetUsers(outputAt(out), [7]);

  const after = filesUnder(join(out, 'lake'));
  // rewritten (a new name): the older users snapshot, both orders files with user 7, the order history;
  // the latest snapshot holds nothing of user 7 to clear, orders of 2026-11-03 and the rest are not theirs
  expect(before.filter((f) => !after.includes(f)).sort()).toEqual([
    'order_versions/organisation_group_id=1/day-2026-11-02.va.parquet',
    'orders/organisation_group_id=1/day-2026-11-01.va.parquet',
    'orders/organisation_group_id=1/day-2026-11-02.va.parquet',
    'users/organisation_group_id=1/day-2026-11-01.va.parquet',
  ]);
  expect(result.streams).toMatchObject({
    users: { files: 1, rows: 1 },
    orders: { files: 2, rows: 2 },
    order_versions: { files: 1, rows: 1 },
  });

  const users = (await readStream(out, 'users', 'id, _snapshot_date')).rows;
  expect(users.map((u) => [u.id, u.email, u.first_name, u.last_name, u.alt_uid ?? null])).toEqual([
    [7, null, null, null, null],
    [7, null, null, null, null],
    [8, 'b@x.io', 'Bo', 'Lind', 'B8'],
    [9, 'c@x.io', 'Cy', 'Dahl', null],
  ]);
  const orders = (await readStream(out, 'orders', 'order_id')).rows;
  expect(orders.map((o) => [o.order_id, o.email, o.first_name, o._extra ?? null])).toEqual([
    [100, null, null, null],
    [101, 'c@x.io', 'Cy', null],
    [102, null, null, null],
    [103, 'b@x.io', null, null],
  ]);
  const history = (await readStream(out, 'order_versions', 'order_id')).rows;
  expect(history.map((h) => [h.order_id, h._extra])).toEqual([
    [100, null],
    [101, '{"n":2}'],
    [102, null],
  ]);
});
