/**
 * The finance close as sources of the models (issue 17): the close record (`<out>/closes/closes.jsonl`,
 * verified) becomes small tables the SQL reads like lake views:
 * - `close_records`: per group and month, the close in force (a later reopen removes it), with the revenue rule
 *   (PERKS_REVENUE_STATUSES) it was closed under: a closed month's `is_recognised` never follows a later setting;
 * - `close_figures`: the figures that close froze, per currency and order status (the report's numbers);
 * - `close_credit`: the credit liability that close froze at the month end (when credit was extracted by then);
 * - `extract_runs`: an extract run's id and when it finished landing (`finishedAt` of `<out>/runs/<run id>.json`,
 *   the program's clock), for the runs of credit rows a credit close may depend on, so a model can tell when a
 *   lake row landed: `_extracted_at` is when its run STARTED, and its snapshot day is that start's UTC day (a run
 *   started on a month's last day may land after the close).
 * - `month_states`: each group's months and their state (month-states.ts).
 * A broken hash chain stops the build (exit 2) before any model runs.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { closesInForce, frozenFigures, readCloses } from '../../closes/index.js';
import { readFile } from 'node:fs/promises';
import { DEFAULTS } from '../../config/index.js';
import { MANIFEST_KEYS, runManifestPath } from '../../lake/run-manifest.js';
import { camelKeys } from '../../shared/json-keys.js';
import { createMonthStates } from './month-states.js';
import type { Output } from '../../output/index.js';

export const CLOSE_TABLES = ['close_records', 'close_figures', 'close_credit', 'extract_runs', 'month_states'] as const;

const MONEY = 'DECIMAL(38,2)';

/** Creates the tables on `conn`; `output` null gives them empty (for the data dictionary). */
export async function createCloseTables(conn: DuckDBConnection, output: Output | null): Promise<number> {
  const outDir = output?.dir ?? null;
  await conn.run(`CREATE OR REPLACE TABLE close_records (organisation_group_id BIGINT, month DATE, closed_at TIMESTAMPTZ, closed_by VARCHAR,
    is_forced BOOLEAN, record_seq BIGINT, record_hash VARCHAR, revenue_statuses VARCHAR[])`);
  await conn.run(`CREATE OR REPLACE TABLE close_figures (organisation_group_id BIGINT, month DATE, order_currency VARCHAR, order_status VARCHAR,
    orders BIGINT, face_value ${MONEY}, order_total_paid ${MONEY}, order_credit ${MONEY}, order_saving ${MONEY}, group_revenue ${MONEY})`);
  await conn.run(`CREATE OR REPLACE TABLE close_credit (organisation_group_id BIGINT, month DATE, users BIGINT,
    credit_available ${MONEY}, credit_granted ${MONEY}, credit_spent ${MONEY}, credit_expired ${MONEY})`);
  await conn.run(`CREATE OR REPLACE TABLE extract_runs (run_id VARCHAR, finished_at TIMESTAMPTZ)`);
  const inForce = output === null ? [] : [...closesInForce(await readCloses(output)).values()];
  await createMonthStates(conn, outDir, inForce);
  if (outDir === null) return 0;
  for (const r of inForce) {
    const month = `${r.month}-01`;
    const figures = frozenFigures(r);
    // The rule the month was closed under (a status name holds no comma: src/config/revenue-statuses.ts).
    const statuses = (figures.revenue_statuses ?? DEFAULTS.revenueStatuses).join(',');
    await conn.run(
      `INSERT INTO close_records VALUES ($g, $m::DATE, $at::TIMESTAMPTZ, $by, $forced, $seq, $hash, string_split($rs, ','))`,
      {
        g: r.organisation_group_id,
        m: month,
        at: r.at,
        by: r.by,
        forced: r.forced,
        seq: r.seq,
        hash: r.hash,
        rs: statuses,
      },
    );
    const credit = figures.section.credit;
    if (credit) {
      await conn.run(
        `INSERT INTO close_credit VALUES ($g, $m::DATE, $u::BIGINT, $a::${MONEY}, $gr::${MONEY}, $s::${MONEY}, $e::${MONEY})`,
        {
          g: r.organisation_group_id,
          m: month,
          u: credit.users,
          a: credit.available,
          gr: credit.granted,
          s: credit.spent,
          e: credit.expired,
        },
      );
    }
    for (const c of figures.section.currencies) {
      for (const s of c.byStatus) {
        await conn.run(
          `INSERT INTO close_figures VALUES ($g, $m::DATE, $cur, $st, $o::BIGINT, $f::${MONEY}, $p::${MONEY}, $cr::${MONEY}, $sv::${MONEY}, $r::${MONEY})`,
          {
            // "" is how the report shows a missing currency or status: back to NULL, as in revenue_monthly
            g: r.organisation_group_id,
            m: month,
            cur: c.currency === '' ? null : c.currency,
            st: s.status === '' ? null : s.status,
            o: s.values.orders,
            f: s.values.face_value,
            p: s.values.order_total_paid,
            cr: s.values.order_credit,
            sv: s.values.order_saving,
            r: s.values.group_revenue,
          },
        );
      }
    }
  }
  await loadExtractRuns(conn, outDir);
  return inForce.length;
}

/**
 * When the extract runs that matter to the credit close finished landing: the runs of credit rows dated on or
 * before the end of a month whose close froze a credit liability (only those can change an as-closed figure).
 * Read from their manifests (`<out>/runs/<run id>.json`, written atomically once the run has landed
 * everything); a run killed before its manifest has none, and is no row. Needs `lake_credit` and `close_credit`.
 */
async function loadExtractRuns(conn: DuckDBConnection, outDir: string): Promise<void> {
  const ids = (
    await conn.runAndReadAll(
      `SELECT DISTINCT c._run_id AS run FROM lake_credit AS c JOIN close_credit AS f
       ON CAST(c.organisation_group_id AS BIGINT) = f.organisation_group_id AND CAST(c._snapshot_date AS DATE) < f.month + INTERVAL 1 MONTH
     WHERE c._run_id IS NOT NULL`,
    )
  )
    .getRowObjectsJS()
    .map((r) => r.run as string);
  for (const id of ids) {
    let path: string;
    try {
      path = runManifestPath(outDir, id);
    } catch {
      continue; // not a run id a manifest could be named by
    }
    const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (text === undefined) continue;
    let finishedAt: unknown;
    try {
      ({ finishedAt } = camelKeys(JSON.parse(text), MANIFEST_KEYS) as { finishedAt?: unknown }); // either spelling
    } catch {
      continue; // written atomically, so never half a file; anything else is not an extract manifest
    }
    if (typeof finishedAt !== 'string' || Number.isNaN(Date.parse(finishedAt))) continue;
    await conn.run(`INSERT INTO extract_runs VALUES ($id, $at::TIMESTAMPTZ)`, {
      id,
      at: new Date(finishedAt).toISOString(),
    });
  }
}
