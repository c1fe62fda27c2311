/**
 * `latest: lake_users` (stg_users, stg_user_emails): the build reads only each group's latest users snapshot,
 * on the hand-written lake (group 11 has an older snapshot naming a user the latest listing no longer holds,
 * and the anonymised user's old email), and stores the view whole for analysts. A model reading the history
 * keeps the view whole for the build. An empty latest listing empties its group, as stg_users' rule says.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildWarehouse, type BuildResult } from '../../src/transform/index.js';
import { ANONYMISED, writeFixtureLake } from './fixture-lake.js';
import { AS_OF, copyOfProject, query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
const project = copyOfProject();
const sqlDir = project.sqlDir;

beforeAll(async () => {
  outDir = await writeFixtureLake();
});
afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  project.remove();
});

const lakeStep = (b: BuildResult) => b.steps.find((s) => s.kind === 'lake')!;
const warehouse = () => join(outDir, 'warehouse.duckdb');
const currentUsers = async () =>
  (await query(warehouse(), 'SELECT user_id FROM stg_users WHERE organisation_group_id = 11 ORDER BY user_id')).map(
    (r) => Number(r.user_id),
  );

test('the users are read from each group latest snapshot alone; the stored lake_users still holds every snapshot', async () => {
  const b = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  expect(b.error).toBeUndefined();
  // group 11 has two snapshots of two files each, groups 12 and 13 one of one file: 4 of the 6 files are read
  expect(lakeStep(b).latestSnapshots).toEqual([{ view: 'lake_users', files: 4, of: 6 }]);
  // user 99 is only in the older snapshot; the anonymised user's email only there too
  const users = await currentUsers();
  expect(users).toContain(1);
  expect(users).not.toContain(99);
  expect(
    await query(warehouse(), `SELECT count(*) AS n FROM engagement_users WHERE CAST(user_id AS BIGINT) = 99`),
  ).toEqual([{ n: '0' }]);
  const snapshots = await query(
    warehouse(),
    `SELECT strftime(_snapshot_date, '%Y-%m-%d') AS day, count(*) AS n FROM lake_users WHERE organisation_group_id = 11 GROUP BY ALL ORDER BY day`,
  );
  expect(snapshots.map((r) => r.day)).toEqual(['2026-03-30', '2026-03-31']);
  expect(await query(warehouse(), `SELECT count(*) AS n FROM lake_users WHERE email = '${ANONYMISED.email}'`)).toEqual([
    { n: '1' },
  ]);
});

test('a model that reads the users history keeps the view whole for the build, with the same current users', async () => {
  writeFileSync(
    join(sqlDir, 'marts', 'user_snapshots.sql'),
    '-- Users per group and snapshot day.\n-- grain: one row per organisation_group_id, snapshot_date\n' +
      'select organisation_group_id, _snapshot_date as snapshot_date, count(*) as users from lake_users group by all\n',
  );
  const b = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF });
  expect(b.error).toBeUndefined();
  expect(lakeStep(b).latestSnapshots).toBeUndefined();
  expect(
    await query(
      warehouse(),
      `SELECT strftime(snapshot_date, '%Y-%m-%d') AS day, users FROM user_snapshots WHERE organisation_group_id = 11 ORDER BY day`,
    ),
  ).toEqual([
    { day: '2026-03-30', users: '5' },
    { day: '2026-03-31', users: expect.any(String) },
  ]);
  expect(await currentUsers()).not.toContain(99);
});

test('an empty latest listing means no current users in that group (not the listing before it)', async () => {
  // group 13's listing of 1 April came back empty: a file with no rows, as the extract lands it
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const users = join(outDir, 'lake', 'users', 'organisation_group_id=13');
  mkdirSync(join(users, '_snapshot_date=2026-04-01'));
  await conn.run(
    `COPY (SELECT * FROM read_parquet('${join(users, '_snapshot_date=2026-03-31', 'part-0.parquet')}') WHERE false)
     TO '${join(users, '_snapshot_date=2026-04-01', 'part-0.parquet')}' (FORMAT parquet)`,
  );
  conn.closeSync();
  db.closeSync();
  const before = await query(warehouse(), 'SELECT count(*) AS n FROM stg_users WHERE organisation_group_id = 13');
  expect(Number(before[0].n)).toBeGreaterThan(0);
  const b = await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF });
  expect(b.error).toBeUndefined();
  expect(await query(warehouse(), 'SELECT count(*) AS n FROM stg_users WHERE organisation_group_id = 13')).toEqual([
    { n: '0' },
  ]);
  expect(await currentUsers()).toContain(1);
});
