/**
 * `month_states`: each group's months and their state (partial, provisional, final, signed_off), by the one rule
 * of src/closes/month-state.ts over the group's orders state (`<out>/state/orders/<group>.json`) and the closes in
 * force, so the marts say what the report and `perks status` say. A source like the close tables, read through
 * `stg_month_states` (which declares its intervals): a month whose state changes (a day passes the lookback, a
 * close, a reopen) dirties that group-month alone in a model built by months, and its month file is exported again.
 * Rows: every month from FLOOR_MONTH (no Perks data is older) to the later of the watermark's month and the
 * latest month signed off; a month after those has no row, and is provisional (the marts' coalesce): nothing has
 * extracted it yet.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  FLOOR_MONTH,
  MONTH_STATES,
  frozenFigures,
  groupsWithOrdersState,
  monthDays,
  monthStateOf,
  nextMonth,
  readOrdersState,
  type CloseRecord,
  type ReadOrdersState,
} from '../../closes/index.js';
import { DEFAULTS } from '../../config/index.js';

/** The SQL type of a month's state, created in the build's database; the marts cast their coalesce to it. */
export const MONTH_STATE_TYPE = 'month_state';

interface Row {
  g: number;
  m: string;
  s: string;
  r: string[] | null;
}

/** Creates `month_states` on `conn`; `outDir` null gives it empty (for the data dictionary). */
export async function createMonthStates(
  conn: DuckDBConnection,
  outDir: string | null,
  inForce: readonly CloseRecord[],
): Promise<number> {
  // An ENUM, not VARCHAR: the marts carry the state on every row (savings_monthly: one per user and month), and
  // a one-byte code costs a fraction of a string to build, store, swap and export (Parquet still holds strings)
  await conn.run(
    `CREATE TYPE IF NOT EXISTS ${MONTH_STATE_TYPE} AS ENUM (${MONTH_STATES.map((s) => `'${s}'`).join(', ')})`,
  );
  await conn.run(
    `CREATE OR REPLACE TABLE month_states (organisation_group_id BIGINT, month DATE, month_state ${MONTH_STATE_TYPE}, revenue_statuses VARCHAR[])`,
  );
  if (outDir === null) return 0;
  const signed = new Map<number, Map<string, string[]>>();
  for (const r of inForce) {
    const months = signed.get(r.organisation_group_id) ?? new Map<string, string[]>();
    months.set(r.month, [...(frozenFigures(r).revenue_statuses ?? DEFAULTS.revenueStatuses)]);
    signed.set(r.organisation_group_id, months);
  }
  const groups = new Set([...(await groupsWithOrdersState(outDir)), ...signed.keys()]);
  const rows: Row[] = [];
  for (const g of [...groups].sort((a, b) => a - b)) {
    const state = await readOrdersState(outDir, g);
    rows.push(...groupRows(g, state, signed.get(g) ?? new Map<string, string[]>()));
  }
  // one statement, the rows as one JSON parameter (a few hundred per group)
  await conn.run(
    `INSERT INTO month_states
     SELECT r.g, r.m, r.s, r.r FROM (SELECT unnest(from_json($rows, '[{"g":"BIGINT","m":"DATE","s":"VARCHAR","r":"VARCHAR[]"}]')) AS r)`,
    { rows: JSON.stringify(rows) },
  );
  return rows.length;
}

/** A group's rows: FLOOR_MONTH to the later of its watermark's month and its latest close. */
function groupRows(g: number, state: ReadOrdersState, signed: Map<string, string[]>): Row[] {
  const watermark = state !== undefined && !('error' in state) ? state.watermark : undefined;
  const last = [watermark?.slice(0, 7) ?? FLOOR_MONTH, ...signed.keys()].sort().at(-1)!;
  const rows: Row[] = [];
  for (let ym = FLOOR_MONTH; ym <= last; ym = nextMonth(ym)) {
    const statuses = signed.get(ym);
    const s = monthStateOf(monthDays(ym), state, statuses !== undefined);
    rows.push({ g, m: `${ym}-01`, s, r: statuses ?? null });
  }
  return rows;
}
