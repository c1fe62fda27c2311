/**
 * Before a close, the credit of the month's holders is read again: every user whose latest read holds a
 * non-zero balance, or who placed an order in the month that carried credit (order_credit > 0), unless read
 * on the month's last day or later already, stalest read first, within a call budget. credit_liability_monthly
 * then rests the month end on those reads (rolled back to it by their items); what the budget did not reach
 * stays stale, and the close refuses it without --force.
 */
import type { Output } from '../output/index.js';
import { readdirSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { extract } from '../extract/index.js';
import { groupsOf, scanSql, streamDir, streamGlob, withLakeConnection } from '../lake/index.js';
import type { ReportMonth } from '../report/index.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

export interface CreditRefresh {
  /** Users with a non-zero balance or a credit-bearing order in the month (of the groups asked). */
  readonly holders: number;
  /** Of those, read again now; the rest wait (the budget was spent). */
  readonly refreshed: number;
  readonly waiting: number;
  /** API calls the refresh made (the users listing it needs included), and its budget in calls. */
  readonly calls: number;
  readonly budgetCalls: number;
  readonly run_id?: string;
}

const hasParquet = (dir: string): boolean => {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.parquet'));
  } catch {
    return false;
  }
};

/**
 * Per group, the month's credit holders whose latest read is older than the month's last day (a read on it or
 * after it already bounds the month end), stalest read first (never read first).
 */
export async function creditHolders(
  outDir: string,
  month: ReportMonth,
  groups: readonly number[],
  /** Also the holders already read on the month's last day or later (the close needs only the others). */
  options: { all?: boolean } = {},
): Promise<Map<number, number[]>> {
  const lake = (stream: string) => streamDir(outDir, stream);
  const globs: Record<string, string> = {};
  // a stream with no files yet is an empty relation of the columns read
  const source = (stream: string, columns: string) => {
    if (!hasParquet(lake(stream))) return `(SELECT ${columns} WHERE false)`;
    globs[stream] = streamGlob(outDir, stream);
    return scanSql(`$${stream}`);
  };
  const empty = {
    credit:
      'NULL::BIGINT AS organisation_group_id, NULL::BIGINT AS user_id, NULL::DECIMAL(18,2) AS available, ' +
      'NULL::TIMESTAMPTZ AS _extracted_at, NULL::VARCHAR AS _run_id, NULL::DATE AS _snapshot_date',
    users:
      'NULL::BIGINT AS organisation_group_id, NULL::BIGINT AS id, NULL::VARCHAR AS email, NULL::DATE AS _snapshot_date, NULL::TIMESTAMPTZ AS _extracted_at',
    orders:
      'NULL::BIGINT AS organisation_group_id, NULL::VARCHAR AS email, NULL::DECIMAL(18,2) AS order_credit, NULL::DATE AS order_date',
  };
  const holders = new Map<number, number[]>();
  if (!groups.length) return holders;
  await withLakeConnection(async (c) => {
    const sql = `WITH credit AS (
         SELECT organisation_group_id::BIGINT AS g, user_id::BIGINT AS u, available, _extracted_at AS read_at,
                _snapshot_date::DATE AS read_day
         FROM ${source('credit', empty.credit)}
         QUALIFY row_number() OVER (PARTITION BY organisation_group_id, user_id ORDER BY _extracted_at DESC, _run_id DESC) = 1
       ), users AS (
         SELECT organisation_group_id::BIGINT AS g, id::BIGINT AS u, lower(email) AS email
         FROM ${source('users', empty.users)}
         QUALIFY row_number() OVER (PARTITION BY organisation_group_id, id ORDER BY _snapshot_date::DATE DESC, _extracted_at DESC) = 1
       ), spenders AS (
         SELECT DISTINCT users.g, users.u FROM ${source('orders', empty.orders)} AS o
         JOIN users ON users.g = o.organisation_group_id::BIGINT AND users.email = lower(o.email)
         WHERE o.order_credit > 0 AND o.order_date::DATE >= $from::DATE AND o.order_date::DATE < $to::DATE
       ), holders AS (
         SELECT g, u FROM credit WHERE available <> 0 UNION SELECT g, u FROM spenders
       )
       SELECT holders.g, holders.u FROM holders LEFT JOIN credit USING (g, u)
       WHERE list_contains($groups::BIGINT[], holders.g)
         AND ($all OR credit.read_day IS NULL OR credit.read_day < $last::DATE)
       ORDER BY credit.read_at ASC NULLS FIRST, holders.g, holders.u`;
    const r = await c.runAndReadAll(sql, {
      ...globs,
      from: month.start,
      to: month.next,
      last: month.end,
      all: options.all ?? false,
      groups: `[${groups.join(',')}]`,
    });
    for (const row of r.getRowObjectsJS()) {
      const g = Number(row.g);
      holders.set(g, [...(holders.get(g) ?? []), Number(row.u)]);
    }
  });
  return holders;
}

/** Reads the holders' credit again (one call each, stalest first) within `budgetMinutes` at the rate limit. */
export async function refreshCredit(
  config: Config,
  month: ReportMonth,
  /** `output`: where the refresh lands (the command's Output), its progress reported to a store. */
  options: { output: Output; group?: number; budgetMinutes: number },
): Promise<CreditRefresh> {
  const outDir = options.output.dir;
  const groups = options.group !== undefined ? [options.group] : config.groupIds;
  const holders = await creditHolders(outDir, month, groups ?? lakeGroups(outDir));
  const count = [...holders.values()].reduce((n, ids) => n + ids.length, 0);
  const budgetCalls = Math.floor(options.budgetMinutes * config.rateLimit);
  if (count === 0) return { holders: 0, refreshed: 0, waiting: 0, calls: 0, budgetCalls };
  const result = await extract(config, {
    output: options.output,
    streams: ['credit'],
    refreshUsers: Object.fromEntries(holders),
    budgetMinutes: options.budgetMinutes,
    // one group closed: its users listed and its holders read, no other group's
    ...(options.group !== undefined ? { onlyGroups: [options.group] } : {}),
  });
  const credit = result.streams.find((s) => s.name === 'credit');
  if (result.status === 'error' || !credit || credit.status !== 'success')
    throw new UserFacingError(
      `the credit refresh of ${month.ym} before the close failed; nothing was closed: ` +
        (result.streams.find((st) => st.error)?.error ?? 'see the run manifest'),
      ExitCode.failed,
    );
  const refreshed = credit.groups.reduce((n, g) => n + (g.users?.requested ?? 0), 0);
  return {
    holders: count,
    refreshed,
    waiting: count - refreshed,
    calls: result.api.calls,
    budgetCalls,
    run_id: result.runId,
  };
}

/** The groups the lake holds credit of (an organisation token without PERKS_GROUP_IDS). */
function lakeGroups(outDir: string): number[] {
  return groupsOf(outDir, 'credit').map(Number);
}
