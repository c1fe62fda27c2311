/**
 * Issue 50: an engine that is not ours reads the store. ClickHouse's engine (chdb: the ClickHouse library,
 * embedded; test/support/chdb.ts) reads what `perks run` published, over the S3 API as a ClickHouse cluster
 * reads a bucket, with the SQL docs/reading-the-store.md gives: a mart by its own name
 * (`marts/revenue_monthly.parquet`), and the orders stream through its manifest (`lake/orders/_current.json`:
 * the objects it names and no others, never a listing). Its answers agree with `perks sql` to the cent:
 * revenue per month, group and currency, and orders counted as stg_orders counts them (a key once, its
 * latest extraction).
 *
 * The S3 server is a parameter: each entry of SERVERS starts a store world on one (and what perks needs beside
 * it: s3rver enforces no conditional writes, so its world brings Redis for the store's lease).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startClickHouse, type ClickHouse } from '../support/chdb.js';
import { testSandbox } from '../support/sandbox.js';
import { startStoreWorld, type StoreWorld } from '../support/store-world.js';

type ReaderWorld = Pick<StoreWorld, 's3' | 'env' | 'machine' | 'perks' | 'stop'>;

/** The S3 servers the store is read from. */
const SERVERS: { name: string; start: () => Promise<ReaderWorld> }[] = [
  // a real S3 server, as a ClickHouse cluster reads (s3rver with Redis proves nothing more here: one run is enough)
  { name: 'Ceph RGW (the lease in the store)', start: () => startStoreWorld('rgw') },
];

const PREFIX = 'readers';

/** Revenue per month, group and currency, as each engine says it: one string per row, in one order. */
interface Revenue {
  month: string;
  organisation_group_id: number;
  order_currency: string | null;
  orders: number;
  group_revenue: string;
}
const lines = (rows: Revenue[]) =>
  rows.map((r) => [r.month, r.organisation_group_id, r.order_currency, r.orders, r.group_revenue].join(' ')).sort();

/** Twice an amount of two decimal places, in the same text (`-0.40` → `-0.80`). */
function twice(amount: string): string {
  const cents = BigInt(amount.replace('.', '')) * 2n;
  const digits = (cents < 0n ? -cents : cents).toString().padStart(3, '0');
  return `${cents < 0n ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** The mart, summed over order statuses; `source` is where it is read from. */
const martSql = (source: string) =>
  `SELECT month, organisation_group_id, order_currency, sum(orders) AS orders, sum(group_revenue) AS group_revenue
   FROM ${source} GROUP BY ALL ORDER BY ALL`;

/**
 * The orders stream's current objects as its manifest names them, in one `{a,b,…}` of their keys: ClickHouse
 * asks for each key and lists nothing. A scalar subquery, so one statement reads the manifest and then its objects.
 */
const MANIFEST_FILES = `(
  SELECT concat('lake/orders/{', arrayStringConcat(
           JSONExtract(raw_blob, 'files', 'Array(Tuple(path String, size UInt64))').path, ','), '}')
  FROM s3(perks_store, filename = 'lake/orders/_current.json', format = 'RawBLOB'))`;

/**
 * ClickHouse over the orders objects `filename` names (keys under the store's prefix): each order once, its
 * latest extraction (stg_orders' rule: the latest _extracted_at, then _run_id), summed per month, group and
 * currency. The partition columns come from the paths.
 */
const lakeOrdersSql = (filename: string) =>
  `SELECT toStartOfMonth(order_date) AS month, organisation_group_id, order_currency,
          count() AS orders, sum(group_revenue) AS group_revenue
   FROM (
     SELECT organisation_group_id, order_id, order_date, order_currency, group_revenue
     FROM s3(perks_store, filename = ${filename}, format = 'Parquet')
     ORDER BY _extracted_at DESC, _run_id DESC
     LIMIT 1 BY organisation_group_id, order_id
     SETTINGS use_hive_partitioning = 1
   )
   GROUP BY ALL ORDER BY ALL`;

/** What `perks sql` says (one command): the mart as ClickHouse reads it, and stg_orders (a row per order) likewise. */
const PERKS_SQL = `SELECT 'mart' AS answer, * FROM (${martSql('revenue_monthly')})
  UNION ALL BY NAME
  SELECT 'stg_orders' AS answer, * FROM (
    SELECT CAST(date_trunc('month', order_date) AS DATE) AS month, organisation_group_id, order_currency,
           count(*) AS orders, sum(group_revenue) AS group_revenue
    FROM stg_orders GROUP BY ALL)`;

interface Manifest {
  stream: string;
  base: string;
  files: { path: string; size: number }[];
}

describe.each(SERVERS)('ClickHouse reads a store on $name', ({ start }) => {
  let world: ReaderWorld;
  let sandbox: Sandbox;
  let clickhouse: ClickHouse;
  let expected: { mart: Revenue[]; stgOrders: Revenue[] };

  beforeAll(async () => {
    clickhouse = await startClickHouse(); // first: without chdb, say how to install it before any run
    world = await start();
    sandbox = await testSandbox({ seed: 50 });
    const env = world.env(sandbox, PREFIX, world.machine());
    // the orders stream and what it needs (groups, users): what the reads below need, in the least time
    const run = await world.perks(['run', '--no-writeback', '--streams', 'orders'], env);
    expect(run.code, run.stderr).toBe(0);
    const sql = await world.perks(['sql', '--format', 'json', PERKS_SQL], env);
    expect(sql.code, sql.stderr).toBe(0);
    const answers = JSON.parse(sql.stdout) as (Revenue & { answer: string })[];
    expected = {
      mart: answers.filter((r) => r.answer === 'mart'),
      stgOrders: answers.filter((r) => r.answer === 'stg_orders'),
    };
    const { endpoint, bucket, env: s3 } = world.s3;
    await clickhouse.run(
      `CREATE NAMED COLLECTION perks_store AS url = '${endpoint}/${bucket}/${PREFIX}/',
       access_key_id = '${s3.AWS_ACCESS_KEY_ID}', secret_access_key = '${s3.AWS_SECRET_ACCESS_KEY}'`,
    );
  }, 300_000);

  afterAll(async () => {
    clickhouse?.close();
    await sandbox?.close();
    await world?.stop();
  });

  /** The counter of ListObjects requests this process's engine has sent. */
  const listings = async () =>
    Number(
      (await clickhouse.rows<{ value: number }>(`SELECT value FROM system.events WHERE name = 'S3ListObjects'`))[0]
        ?.value ?? 0,
    );

  /** The orders stream's manifest, as ClickHouse reads it. */
  const ordersManifest = async () => {
    const [m] = await clickhouse.rows<{ manifest: string }>(
      `SELECT raw_blob AS manifest FROM s3(perks_store, filename = 'lake/orders/_current.json', format = 'RawBLOB')`,
    );
    return JSON.parse(m.manifest) as Manifest;
  };

  test('a mart by its own name: revenue and orders per month, group and currency agree with perks sql to the cent', async () => {
    const { mart } = expected;
    // a world where the comparison means something: several months and currencies
    expect(new Set(mart.map((r) => r.month)).size).toBeGreaterThanOrEqual(3);
    expect(new Set(mart.map((r) => r.order_currency)).size).toBeGreaterThanOrEqual(3);
    const read = await clickhouse.rows<Revenue>(
      martSql(`s3(perks_store, filename = 'marts/revenue_monthly.parquet', format = 'Parquet')`),
    );
    expect(lines(read)).toEqual(lines(mart));
  });

  test('the orders stream through its manifest: every object it names and no other, no listing; orders and revenue agree with stg_orders to the cent, where a glob over the folder reads an object no commit names', async () => {
    const { stgOrders } = expected;
    const manifest = await ordersManifest();
    expect(manifest.base).toBe(`s3://${world.s3.bucket}/${PREFIX}/lake/orders/`);
    // a name ClickHouse would read as a pattern, or that would end the SQL string, is not in the lake
    for (const f of manifest.files) expect(f.path).toMatch(/^[\w=./-]+$/);
    const listed = await listings();
    expect(lines(await clickhouse.rows<Revenue>(lakeOrdersSql(MANIFEST_FILES)))).toEqual(lines(stgOrders));
    expect(await listings(), 'the manifest read lists nothing').toBe(listed);

    // a publish that uploaded a month's new file and has not committed it (nor rewritten the manifest): its rows
    // re-read a day later, the revenue changed. The manifest's readers do not see it; a glob does.
    const closed = manifest.files.find((f) => /(^|\/)month-\d{4}-\d{2}\.g\d+\./.test(f.path))!.path;
    const uncommitted = closed.replace(/month-(\d{4}-\d{2})\.g\d+\..*$/, 'month-$1.g99.vuncommitted.parquet');
    await clickhouse.run(
      `INSERT INTO FUNCTION s3(perks_store, filename = 'lake/orders/${uncommitted}', format = 'Parquet')
       SELECT * EXCEPT (organisation_group_id, order_month)
         REPLACE (_extracted_at + INTERVAL 1 DAY AS _extracted_at, group_revenue * 2 AS group_revenue)
       FROM s3(perks_store, filename = 'lake/orders/${closed}', format = 'Parquet')`,
    );
    expect(lines(await clickhouse.rows<Revenue>(lakeOrdersSql(MANIFEST_FILES)))).toEqual(lines(stgOrders));
    // a glob lists the folder and reads it: each order still once (as stg_orders counts), its latest extraction
    // the uncommitted one, so that group's month says twice its committed revenue
    const globbed = await clickhouse.rows<Revenue>(lakeOrdersSql(`'lake/orders/**.parquet'`));
    expect(await listings(), 'a glob lists the folder').toBeGreaterThan(listed);
    const [, group, month] = /organisation_group_id=(\d+)\/order_month=(\d{4}-\d{2})\//.exec(closed)!;
    const uploaded = (r: Revenue) => r.month === `${month}-01` && r.organisation_group_id === Number(group);
    expect(stgOrders.some(uploaded)).toBe(true);
    expect(lines(globbed)).toEqual(
      lines(stgOrders.map((r) => (uploaded(r) ? { ...r, group_revenue: twice(r.group_revenue) } : r))),
    );
  });
});
