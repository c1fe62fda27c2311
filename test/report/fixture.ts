/**
 * A small output directory for the report tests, built for real with DuckDB: a Hive-partitioned lake of
 * groups and orders (one order extracted twice, so deduplication matters), a warehouse with stg_groups, stg_orders and
 * revenue_monthly built from that lake the way the models do, and extract state files.
 * The numbers are worked out by hand in EXPECTED below.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tempOut } from '../support/scratch.js';

/** group, order_id, order_date, status, brand, currency, face, paid, credit, saving, revenue */
type O = [number, number, string, string, string, string, string, string, string, string, string];

export const ORDERS: O[] = [
  // Acme UK (11), Europe/London, GBP. March 2024: 7 orders, 6 brands (Costa falls out of the top five).
  [11, 1001, '2024-03-01', 'Complete', 'Tesco', 'GBP', '100.00', '90.00', '5.00', '10.00', '4.50'],
  [11, 1005, '2024-03-05', 'Complete', 'Costa', 'GBP', '10.00', '9.00', '0.00', '1.00', '0.45'],
  [11, 1006, '2024-03-06', 'Complete', 'Currys', 'GBP', '300.00', '270.00', '0.00', '30.00', '13.50'],
  [11, 1007, '2024-03-07', 'Complete', 'John Lewis', 'GBP', '400.00', '360.00', '40.00', '40.00', '18.00'],
  [11, 1002, '2024-03-15', 'Complete', 'Argos', 'GBP', '50.00', '45.00', '0.00', '5.00', '2.25'],
  [11, 1003, '2024-03-31', 'Refunded', 'Tesco', 'GBP', '20.00', '18.00', '0.00', '2.00', '0.90'],
  [11, 1004, '2024-03-31', 'Complete', 'Boots', 'GBP', '1250.00', '1125.00', '25.00', '125.00', '56.25'],
  // February 2024 and April 2024 (outside the month).
  [11, 901, '2024-02-10', 'Complete', 'Tesco', 'GBP', '80.00', '72.00', '0.00', '8.00', '3.60'],
  [11, 902, '2024-02-29', 'Complete', 'Argos', 'GBP', '40.00', '36.00', '0.00', '4.00', '1.80'],
  [11, 1101, '2024-04-01', 'Complete', 'Boots', 'GBP', '999.00', '999.00', '0.00', '0.00', '99.90'],
  // Acme US (12), America/New_York: USD and EUR, never added together.
  [12, 2001, '2024-03-02', 'Complete', 'Nike', 'USD', '200.00', '180.00', '0.00', '20.00', '9.00'],
  [12, 2002, '2024-03-10', 'Complete', 'Apple', 'USD', '1000.00', '950.00', '0.00', '50.00', '30.00'],
  [12, 2003, '2024-03-10', 'Pending', 'Nike', 'USD', '60.00', '54.00', '0.00', '6.00', '2.70'],
  [12, 2004, '2024-03-20', 'Complete', 'Zara', 'EUR', '30.00', '27.00', '0.00', '3.00', '1.35'],
  [12, 1901, '2024-02-05', 'Complete', 'Nike', 'USD', '100.00', '90.00', '0.00', '10.00', '4.50'],
];

/** Order 2002 as an earlier extract saw it: the lake keeps it, the latest extract wins. */
export const STALE_2002: O = [
  12,
  2002,
  '2024-03-10',
  'Pending',
  'Apple',
  'USD',
  '1000.00',
  '950.00',
  '0.00',
  '50.00',
  '25.00',
];

/** Worked out by hand from ORDERS, March 2024 against February 2024. */
export const EXPECTED = {
  uk: {
    orders: '7',
    face_value: '2130.00',
    order_total_paid: '1917.00',
    order_credit: '70.00',
    order_saving: '213.00',
    group_revenue: '95.85',
  },
  ukPrevious: { orders: '2', group_revenue: '5.40' },
  ukChange: { group_revenue: '90.45', pct: '1675.0' },
  usd: {
    orders: '3',
    face_value: '1260.00',
    order_total_paid: '1184.00',
    order_credit: '0.00',
    order_saving: '76.00',
    group_revenue: '41.70',
  },
  usdChange: { group_revenue: '37.20', pct: '826.7' },
  eur: {
    orders: '1',
    face_value: '30.00',
    order_total_paid: '27.00',
    order_credit: '0.00',
    order_saving: '3.00',
    group_revenue: '1.35',
  },
  ukTopBrands: ['Boots', 'John Lewis', 'Currys', 'Tesco', 'Argos'],
};

export const GROUPS = [
  { id: 11, name: 'acme-uk', display_name: 'Acme UK', timezone: 'Europe/London' },
  { id: 12, name: 'acme-us', display_name: 'Acme US', timezone: 'America/New_York' },
];

export const newOutDir = (): string => tempOut('perks-report-');

const lit = (v: string) => `'${v.replaceAll("'", "''")}'`;
const row = (o: O) =>
  `(${o[1]}::BIGINT, ${lit(o[3])}, ${lit(o[4])}, ${lit(o[5])}, ${o
    .slice(6)
    .map((v) => `${v}::DECIMAL(18,2)`)
    .join(', ')})`;
const COLUMNS =
  'order_id, order_status, brand, order_currency, face_value, order_total_paid, order_credit, order_saving, group_revenue';

/** Writes the lake: one Parquet file per (group, day, run), partition values only in the path. */
export async function writeLake(outDir: string, orders: O[] = ORDERS, stale: O[] = [STALE_2002]): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const runs = [
    { run: 'run-1', at: '2024-04-02 06:00:00+00', rows: stale },
    { run: 'run-2', at: '2024-04-09 06:00:00+00', rows: orders },
  ];
  for (const { run, at, rows } of runs) {
    const parts = new Map<string, O[]>();
    for (const o of rows) parts.set(`${o[0]}|${o[2]}`, [...(parts.get(`${o[0]}|${o[2]}`) ?? []), o]);
    for (const [key, list] of parts) {
      const [group, day] = key.split('|');
      const dir = join(outDir, 'lake', 'orders', `organisation_group_id=${group}`, `order_date=${day}`);
      await mkdir(dir, { recursive: true });
      await c.run(`COPY (SELECT *, ${lit(at)}::TIMESTAMPTZ AS _extracted_at, ${lit(run)} AS _run_id FROM (VALUES ${list.map(row).join(', ')}) AS t(${COLUMNS}))
        TO ${lit(join(dir, `part-${run}-0.parquet`))} (FORMAT parquet, COMPRESSION zstd)`);
    }
  }
  for (const g of GROUPS) {
    const dir = join(outDir, 'lake', 'groups', `organisation_group_id=${g.id}`, '_snapshot_date=2024-04-09');
    await mkdir(dir, { recursive: true });
    await c.run(`COPY (SELECT ${g.id}::BIGINT AS id, ${lit(g.name)} AS name, ${lit(g.display_name)} AS display_name, false AS sandbox, 'en_GB' AS locale,
      ${lit(g.timezone)} AS timezone, NULL::VARCHAR AS custom_domain, ${lit(g.name)} AS subdomain, TIMESTAMPTZ '2024-04-09 06:00:00+00' AS _extracted_at, 'run-2' AS _run_id)
      TO ${lit(join(dir, 'part-run-2-0.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
  }
  c.closeSync();
  db.closeSync();
}

/**
 * Builds warehouse.duckdb from the lake: staged groups and orders (latest extract per order) and the mart, whose
 * is_recognised follows `revenueStatuses` as the build's does (default Complete); no month is closed.
 */
export async function writeWarehouse(
  outDir: string,
  tweak?: string,
  revenueStatuses: readonly string[] = ['Complete'],
): Promise<string> {
  const path = join(outDir, 'warehouse.duckdb');
  const db = await DuckDBInstance.create(path);
  const c = await db.connect();
  await c.run(
    `CREATE OR REPLACE TABLE stg_groups AS SELECT * FROM (VALUES ${GROUPS.map((g) => `(${g.id}::BIGINT, ${lit(g.name)}, ${lit(g.display_name)}, ${lit(g.timezone)})`).join(', ')}) AS t(organisation_group_id, group_name, display_name, timezone)`,
  );
  await c.run(`CREATE OR REPLACE TABLE stg_orders AS
    SELECT CAST(organisation_group_id AS BIGINT) AS organisation_group_id, order_id, CAST(order_date AS DATE) AS order_date, ${COLUMNS.replace('order_id, ', '')}
    FROM read_parquet(${lit(join(outDir, 'lake', 'orders', '**', '*.parquet'))}, hive_partitioning = true, union_by_name = true)
    QUALIFY row_number() OVER (PARTITION BY organisation_group_id, order_id ORDER BY _extracted_at DESC) = 1`);
  await c.run(`CREATE OR REPLACE TABLE revenue_monthly AS
    SELECT organisation_group_id, CAST(date_trunc('month', order_date) AS DATE) AS month, order_currency, order_status,
      count(*) AS orders, sum(face_value) AS face_value, sum(order_total_paid) AS order_total_paid, sum(order_credit) AS order_credit,
      sum(order_saving) AS order_saving, sum(group_revenue) AS group_revenue,
      coalesce(list_contains([${revenueStatuses.map(lit).join(', ')}], order_status), false) AS is_recognised, false AS is_closed
    FROM stg_orders GROUP BY ALL`);
  if (tweak) await c.run(tweak);
  c.closeSync();
  db.closeSync();
  return path;
}

export async function writeState(outDir: string, group: number, state: unknown): Promise<void> {
  const dir = join(outDir, 'state', 'orders');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${group}.json`), typeof state === 'string' ? state : JSON.stringify(state));
}

/** The whole fixture: lake, warehouse, and state (group 11 closed for March 2024, group 12 not yet). */
export async function buildFixture(
  options: { tweak?: string; revenueStatuses?: readonly string[] } = {},
): Promise<string> {
  const out = newOutDir();
  await writeLake(out);
  await writeWarehouse(out, options.tweak, options.revenueStatuses);
  await writeState(out, 11, { watermark: '2024-04-08', first_day: '2024-01-01', lookback_days: 7 });
  await writeState(out, 12, { watermark: '2024-04-07', first_day: '2024-01-01', lookback_days: 7 });
  return out;
}
