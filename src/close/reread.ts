/**
 * Before a close, the month's windows are read again (every local day of it, every configured group), so a
 * refund that came weeks after the order is in the signed figures rather than in an adjustment; the
 * warehouse is then rebuilt. What changed is what the re-read appended to the order history.
 */
import type { OutputHooks } from '../shared/output-hooks.js';
import type { Config } from '../config/index.js';
import { extract } from '../extract/index.js';
import { scanSql, streamGlob, withLakeConnection } from '../lake/index.js';
import type { Reread } from '../closes/index.js';
import type { ReportMonth } from '../report/index.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

/** The order history as the re-read's queries read it (partition values kept as text). */
const HISTORY = scanSql('$glob', { unionByName: false, autocast: false });

/** At most this many changes are named on the terminal (the count is always whole). */
export const REREAD_LINES = 20;

/** The re-read and, for the terminal, its first changes named ("group 11 order 700042: Complete → Refunded, …"). */
export async function rereadMonth(
  config: Config,
  month: ReportMonth,
  /** The output's hooks: the re-read's progress reported to a store. */
  hooks?: OutputHooks,
): Promise<Reread & { readonly lines: readonly string[] }> {
  const result = await extract(config, { streams: ['orders'], startDate: month.start, endDate: month.next, hooks });
  if (result.status === 'error')
    throw new UserFacingError(
      `the re-read of ${month.ym} before the close failed; nothing was closed: ${result.streams.find((st) => st.error)?.error ?? 'see the run manifest'}`,
      ExitCode.failed,
    );
  const windows = result.streams
    .filter((st) => st.name === 'orders')
    .reduce((n, st) => n + st.groups.reduce((m, g) => m + g.windows, 0), 0);
  const params = {
    glob: streamGlob(config.output, 'order_versions'),
    run: result.runId,
    from: month.start,
    to: month.next,
  };
  const { changed, lines } = await withLakeConnection(async (c) => {
    try {
      const r = await c.runAndReadAll(
        `SELECT count(*) AS n FROM ${HISTORY}
        WHERE _run_id = $run AND order_date >= $from AND order_date < $to`,
        params,
      );
      // each change beside the order's previous observation in the history (none: new to the lake)
      const named = await c.runAndReadAll(
        `WITH h AS (SELECT organisation_group_id AS g, order_id, order_status AS s, CAST(group_revenue AS VARCHAR) || ' ' || coalesce(order_currency, '') AS m, _run_id, _extracted_at
          FROM ${HISTORY} WHERE order_date >= $from AND order_date < $to),
        now AS (SELECT * FROM h WHERE _run_id = $run),
        before AS (SELECT h.* FROM h SEMI JOIN now USING (g, order_id) WHERE h._run_id <> $run
          QUALIFY row_number() OVER (PARTITION BY h.g, h.order_id ORDER BY h._extracted_at DESC) = 1)
        SELECT now.g, now.order_id, before.s AS before_s, before.m AS before_m, now.s, now.m
        FROM now LEFT JOIN before USING (g, order_id) ORDER BY now.g, now.order_id LIMIT ${REREAD_LINES}`,
        params,
      );
      const rows = named.getRowObjectsJson() as (Record<'g' | 'order_id' | 's' | 'm', string> &
        Record<'before_s' | 'before_m', string | null>)[];
      const lines = rows.map((x) =>
        x.before_s === null && x.before_m === null
          ? `group ${x.g} order ${x.order_id}: new (${x.s}, ${x.m})`
          : `group ${x.g} order ${x.order_id}: ${x.before_s} → ${x.s} (group revenue ${x.before_m} → ${x.m})`,
      );
      return { changed: Number(r.getRowObjectsJS()[0].n), lines };
    } catch (err) {
      if (/No files found/i.test((err as Error).message)) return { changed: 0, lines: [] };
      throw err;
    }
  });
  return { run_id: result.runId, windows, changed, lines };
}
