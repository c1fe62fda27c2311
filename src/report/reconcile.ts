/**
 * Reconciliation: the mart's totals for the month against the lake's raw orders for the same month,
 * per group, currency and column. The lake is read as the contract says (hive partitions, union by name),
 * each order once: the row with the latest _extracted_at (then _run_id) per (organisation_group_id, order_id),
 * the same rule as stg_orders.
 */
import { existsSync, readdirSync } from 'node:fs';
import { globUnder, scanSql, streamDir } from '../lake/index.js';
import { type Reconciliation } from './model.js';
import { MEASURES, type Measure, type ReconciliationLine } from '../closes/index.js';
import type { ReportMonth } from './month.js';
import type { Warehouse } from './warehouse.js';

export function ordersLakeDir(outDir: string, groupId?: number): string {
  return streamDir(outDir, 'orders', groupId);
}

export async function reconcile(
  wh: Warehouse,
  outDir: string,
  month: ReportMonth,
  groupIds: readonly number[],
  groupFilter?: number,
): Promise<Reconciliation> {
  const dir = ordersLakeDir(outDir, groupFilter);
  if (!hasParquet(dir))
    return {
      available: false,
      note: `no raw orders in the lake at ${dir}, so the mart cannot be reconciled`,
      lines: [],
      differences: [],
      reconciled: false,
    };
  const lakeSums = MEASURES.map((m) => (m === 'orders' ? 'count(*) AS orders' : `coalesce(sum(${m}), 0) AS ${m}`)).join(
    ', ',
  );
  const compare = MEASURES.map(
    (m) => `m.${m} AS mart_${m}, l.${m} AS lake_${m}, coalesce(m.${m}, 0) - coalesce(l.${m}, 0) AS diff_${m}`,
  ).join(',\n      ');
  const rows = await wh.all(
    `WITH raw AS (
      SELECT CAST(organisation_group_id AS BIGINT) AS organisation_group_id, CAST(order_date AS DATE) AS order_date,
        order_id, order_currency, ${MEASURES.filter((m) => m !== 'orders').join(', ')}, _extracted_at, _run_id
      FROM ${scanSql(sqlString(globUnder(dir, '**', '*.parquet')))}
    ),
    latest AS (
      SELECT * FROM raw
      QUALIFY row_number() OVER (PARTITION BY organisation_group_id, order_id ORDER BY _extracted_at DESC, _run_id DESC) = 1
    ),
    lake AS (
      SELECT organisation_group_id, coalesce(order_currency, '') AS currency, ${lakeSums}
      FROM latest WHERE order_date >= $cur::DATE AND order_date < $next::DATE
      GROUP BY 1, 2
    ),
    mart AS (
      SELECT organisation_group_id, coalesce(order_currency, '') AS currency,
        ${MEASURES.map((m) => `sum(${m}) AS ${m}`).join(', ')}
      FROM revenue_monthly WHERE month = $cur::DATE
      GROUP BY 1, 2
    )
    SELECT coalesce(m.organisation_group_id, l.organisation_group_id) AS group_id, coalesce(m.currency, l.currency) AS currency,
      ${compare}
    FROM mart m FULL OUTER JOIN lake l ON l.organisation_group_id = m.organisation_group_id AND l.currency = m.currency
    ORDER BY 1, 2`,
    { cur: month.start, next: month.next },
  );
  const wanted = new Set(groupIds);
  const lines: ReconciliationLine[] = rows
    .filter((r) => wanted.has(Number(r.group_id)))
    .flatMap((r) =>
      MEASURES.map((column: Measure) => ({
        groupId: Number(r.group_id),
        currency: String(r.currency),
        column,
        mart: r[`mart_${column}`] === null ? null : String(r[`mart_${column}`]),
        lake: r[`lake_${column}`] === null ? null : String(r[`lake_${column}`]),
        difference: String(r[`diff_${column}`]),
      })),
    );
  const differences = lines.filter((l) => !isZero(l.difference) || (l.mart === null) !== (l.lake === null));
  return { available: true, lines, differences, reconciled: differences.length === 0 };
}

/** DuckDB takes the file pattern as a literal; quotes are doubled, so any path is safe. */
function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function isZero(decimal: string): boolean {
  return /^-?0*(\.0*)?$/.test(decimal);
}

function hasParquet(dir: string): boolean {
  if (!existsSync(dir)) return false;
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.parquet'));
}
