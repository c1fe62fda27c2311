/**
 * The generated lake of the build and lake-read benchmarks: every stream, written by DuckDB straight to
 * Hive-partitioned Parquet in the layout before month folders (one file per group and day for orders,
 * following docs/dev/lake-contract.md), for four groups over a year ending the day before AS_OF.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

export const GROUPS = [
  { id: 11, tz: 'Europe/London', ccy: 'GBP' },
  { id: 12, tz: 'America/New_York', ccy: 'USD' },
  { id: 13, tz: 'Australia/Sydney', ccy: 'AUD' },
  { id: 14, tz: 'UTC', ccy: 'EUR' },
];
export const DAYS = 365;
export const AS_OF = '2026-04-01';
/**
 * An order's saving, by its user (u) and face value (fv): 10% to 40% of the face value in steps of 5 (u % 7), so
 * a member's savings over the year (about 10 orders of 10.00–18.99) spread from about 14 to 58, and a generated
 * member's cumulative savings cross the write-back's milestones (50, 100, ...: sql/writeback/) as members' do;
 * the next day's new orders take some more across (lake-days.ts). Before version 3 every saving was 10%, and no
 * member reached the first milestone.
 */
const SAVING = `fv * (0.10 + 0.05 * (u % 7))`;
/** Bumped when the generated lake changes (a cached lake of another version is regenerated: lake.ok). */
export const GENERATOR_VERSION = 3;

/** Whether `outDir` holds a lake this generator made with these arguments (bench caches it between runs). */
export function isGenerated(outDir: string, orders: number, users: number, snapshotDays = 1): boolean {
  try {
    const ok = JSON.parse(readFileSync(join(outDir, 'lake.ok'), 'utf8')) as Record<string, unknown>;
    return (
      ok.version === GENERATOR_VERSION &&
      ok.orders === orders &&
      ok.users === users &&
      (ok.snapshotDays ?? 1) === snapshotDays
    );
  } catch {
    return false;
  }
}

/**
 * Writes every stream of the lake; each COPY partitions by the contract's path columns. `snapshotDays`:
 * daily users snapshots ending the day before AS_OF (1: a lake backfilled in one run; more: a lake of
 * daily runs, every snapshot kept, as before snapshot retention).
 */
export async function generateLake(outDir: string, orders: number, users: number, snapshotDays = 1): Promise<void> {
  const lake = join(outDir, 'lake');
  rmSync(lake, { recursive: true, force: true });
  mkdirSync(lake, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', { preserve_insertion_order: 'false' });
  const c = await db.connect();
  await c.run(`SET TimeZone = 'UTC'`);
  const copy = async (stream: string, select: string, partitions: string) => {
    const t = Date.now();
    await c.run(
      `COPY (${select}) TO '${join(lake, stream)}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (${partitions}), FILENAME_PATTERN 'part-bench-{i}')`,
    );
    console.log(`  generated ${stream} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  const groupCase = (field: 'tz' | 'ccy') =>
    `CASE g ${GROUPS.map((x) => `WHEN ${x.id} THEN '${x[field]}'`).join(' ')} END`;
  const meta = `TIMESTAMPTZ '2026-04-01 02:00:00+00' AS _extracted_at, 'bench-run' AS _run_id`;
  const snap = `DATE '2026-03-31' AS _snapshot_date`;

  await copy(
    'groups',
    `SELECT g AS organisation_group_id, ${snap}, g::BIGINT AS id, 'group ' || g AS name, 'Group ' || g AS display_name,
            false AS sandbox, 'en_GB' AS locale, ${groupCase('tz')} AS timezone, NULL::VARCHAR AS custom_domain,
            'g' || g AS subdomain, ${meta}
     FROM (SELECT unnest([${GROUPS.map((x) => x.id).join(',')}]) AS g)`,
    'organisation_group_id, _snapshot_date',
  );
  await copy(
    'offers',
    `SELECT ${snap}, i::BIGINT AS id, 'Brand ' || (i % 50) AS brand, (i % 50)::BIGINT AS brand_id, 'Offer ' || i AS title,
            '<p>overview</p>' AS overview, '' AS terms, '' AS faq, '' AS how_to_redeem, '10% off' AS offer,
            TIMESTAMPTZ '2025-01-01 00:00:00+00' AS start_date, NULL::TIMESTAMPTZ AS end_date, true AS redemption_in_store,
            true AS redemption_online, false AS redemption_selected_stores, 'https://example.com/o/' || i AS link,
            'https://example.com/i/' || i AS image, 10::BIGINT AS discount, 'vouchers' AS perk_type_format,
            [{'id': 1::BIGINT, 'name': 'Food'}] AS collections,
            {'id': i::BIGINT, 'perk_id': i::BIGINT, 'voucher_code': 'CODE', 'presentation': 'text', 'redeem_url_protocol': 'https',
             'redeem_url': 'https://example.com', 'trackable': true, 'redeem_from_inventory': false, 'group_allocated_inventory': false} AS type,
            ${meta}
     FROM range(1000) t(i)`,
    '_snapshot_date',
  );
  // Users: every 100th is anonymised (personal fields null); earlier daily snapshots, if any, list the same users.
  await copy(
    'users',
    `SELECT 11 + u % 4 AS organisation_group_id, DATE '2026-03-31' - d::INT AS _snapshot_date, (u + 1)::BIGINT AS id, 'uid-' || u AS UID, NULL::VARCHAR AS alt_uid,
            CASE WHEN u % 100 = 0 THEN NULL ELSE 'First' || u END AS first_name,
            CASE WHEN u % 100 = 0 THEN NULL ELSE 'Last' || u END AS last_name,
            CASE WHEN u % 100 = 0 THEN NULL ELSE 'user' || u || '@example.com' END AS email,
            'Active' AS status,
            CASE WHEN u % 7 = 0 THEN NULL ELSE TIMESTAMPTZ '2026-03-31 12:00:00+00' - to_days((u % 200)::INT) END AS last_login,
            CASE WHEN u % 7 = 0 THEN 0 ELSE 1 + u % 40 END::BIGINT AS login_count,
            TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_days((u % 800)::INT) AS created_at,
            TIMESTAMPTZ '2026-01-01 00:00:00+00' AS updated_at, NULL::TIMESTAMPTZ AS deleted_at, ${meta}
     FROM range(${users}) t(u), range(${snapshotDays}) s(d)`,
    'organisation_group_id, _snapshot_date',
  );
  // Orders: the user is a scramble of i; the group follows the user; emails in mixed case.
  await copy(
    'orders',
    `WITH o AS (SELECT i, (i * 7919 + 13) % ${users} AS u FROM range(${orders}) t(i)),
     g AS (SELECT *, 11 + u % 4 AS g, CAST(((i % 900) + 1000) / 100 AS DECIMAL(18,2)) AS fv FROM o)
     SELECT g AS organisation_group_id, DATE '${AS_OF}' - 1 - ((i * 31) % ${DAYS})::INT AS order_date,
            (i + 1)::BIGINT AS order_id, CASE WHEN i % 20 = 0 THEN 'Refunded' ELSE 'Complete' END AS order_status,
            'First' || u AS first_name, 'Last' || u AS last_name,
            CASE WHEN i % 3 = 0 THEN 'User' || u || '@Example.com' ELSE 'user' || u || '@example.com' END AS email,
            (i % 500)::BIGINT AS perk_id, 'Brand ' || (i % 50) AS brand, 'Offer ' || (i % 500) AS offer, 'excerpt' AS offer_excerpt,
            fv AS face_value, (fv - ${SAVING})::DECIMAL(18,2) AS order_total_paid, (i % 5)::DECIMAL(18,2) AS order_credit,
            ${groupCase('ccy')} AS order_currency, (${SAVING})::DECIMAL(18,2) AS order_saving,
            (fv * 0.03)::DECIMAL(18,2) AS group_revenue, ${meta}
     FROM g ORDER BY organisation_group_id, order_date`,
    'organisation_group_id, order_date',
  );
  // The order history as the extract writes it: every order's first observation (a day before the current
  // extract), Complete for the 5% that are Refunded now, and their Refunded version seen by the current extract.
  await copy(
    'order_versions',
    `WITH o AS (SELECT i, (i * 7919 + 13) % ${users} AS u FROM range(${orders}) t(i)),
     g AS (SELECT *, 11 + u % 4 AS g, CAST(((i % 900) + 1000) / 100 AS DECIMAL(18,2)) AS fv FROM o)
     SELECT g AS organisation_group_id, DATE '${AS_OF}' - 1 - ((i * 31) % ${DAYS})::INT AS order_date,
            (i + 1)::BIGINT AS order_id, 'Complete' AS order_status, ${groupCase('ccy')} AS order_currency,
            fv AS face_value, (fv - ${SAVING})::DECIMAL(18,2) AS order_total_paid, (i % 5)::DECIMAL(18,2) AS order_credit,
            (${SAVING})::DECIMAL(18,2) AS order_saving, (fv * 0.03)::DECIMAL(18,2) AS group_revenue,
            TIMESTAMPTZ '2026-03-31 06:00:00+00' AS _extracted_at, 'bench-history' AS _run_id
     FROM g
     UNION ALL
     SELECT g, DATE '${AS_OF}' - 1 - ((i * 31) % ${DAYS})::INT, (i + 1)::BIGINT, 'Refunded', ${groupCase('ccy')},
            fv, (fv - ${SAVING})::DECIMAL(18,2), (i % 5)::DECIMAL(18,2), (${SAVING})::DECIMAL(18,2), (fv * 0.03)::DECIMAL(18,2), ${meta}
     FROM g WHERE i % 20 = 0
     ORDER BY organisation_group_id, order_date`,
    'organisation_group_id, order_date',
  );
  await copy(
    'redemption_stats',
    `WITH r AS (SELECT (r * 7) % ${users} AS u, r % 12 AS m FROM range(${users}) t(r))
     SELECT 11 + u % 4 AS organisation_group_id, (DATE '2025-04-01' + to_months(m::INT))::DATE AS window_start,
            (u + 1)::BIGINT AS id, 'uid-' || u AS UID, 'user' || u || '@example.com' AS email,
            (1 + u % 3)::BIGINT AS all_redemptions_count, (u % 3)::BIGINT AS egift_orders_count,
            (u % 50)::DECIMAL(18,2) AS egift_face_value, (u % 45)::DECIMAL(18,2) AS egift_cost, (CASE WHEN u % 25 = 0 THEN 40 + u % 160 ELSE u % 5 END)::DECIMAL(18,2) AS egift_savings,
            (DATE '2025-04-01' + to_months(m::INT + 1))::DATE AS window_end, ${meta}
     FROM r ORDER BY organisation_group_id, window_start`,
    'organisation_group_id, window_start',
  );
  await copy(
    'credit',
    `SELECT 11 + u % 4 AS organisation_group_id, ${snap}, (u + 1)::BIGINT AS user_id, 5.00::DECIMAL(18,2) AS available,
            2.50::DECIMAL(18,2) AS spent, 1.00::DECIMAL(18,2) AS expired,
            [{'status': 'Available', 'amount': 5.00::DECIMAL(18,2), 'remaining_amount': 5.00::DECIMAL(18,2),
              'expires_at': TIMESTAMPTZ '2027-01-01 00:00:00+00', 'created_at': TIMESTAMPTZ '2026-01-01 00:00:00+00'}] AS credits,
            ${meta}
     FROM range(0, ${users}, 3) t(u)`,
    'organisation_group_id, _snapshot_date',
  );
  await copy(
    'interactions',
    `WITH x AS (SELECT i, (i * 13) % ${users} AS u FROM range(${users}) t(i))
     SELECT 11 + u % 4 AS organisation_group_id, ${snap}, (i + 1)::BIGINT AS id, 'ix-' || i AS interaction_id, 'org-1' AS organisation_id,
            (1 + i % 3)::BIGINT AS interaction_type_id, (u + 1)::BIGINT AS user_id,
            TIMESTAMPTZ '2026-03-01 00:00:00+00' + to_days((i % 30)::INT) AS interaction_at, '{"k": 1}'::JSON AS interaction_details,
            TIMESTAMPTZ '2026-03-01 00:00:00+00' AS created_at, TIMESTAMPTZ '2026-03-01 00:00:00+00' AS updated_at, ${meta}
     FROM x`,
    'organisation_group_id, _snapshot_date',
  );
  c.closeSync();
  db.closeSync();
  writeFileSync(join(outDir, 'lake.ok'), JSON.stringify({ version: GENERATOR_VERSION, orders, users, snapshotDays }));
}
