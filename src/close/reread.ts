/**
 * Before a close, the month's windows are read again (every local day of it, every configured group), so a
 * refund that came weeks after the order is in the signed figures rather than in an adjustment; the
 * warehouse is then rebuilt. What changed is what the re-read appended to the order history.
 */
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { extract } from '../extract/index.js';
import { withLakeConnection } from '../lake/index.js';
import type { ReportMonth } from '../report/month.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';

export interface Reread {
  readonly run_id: string;
  readonly windows: number;
  /** Orders of the month new or changed since they were last landed. */
  readonly changed: number;
}

export async function rereadMonth(config: Config, month: ReportMonth): Promise<Reread> {
  const result = await extract(config, { streams: ['orders'], startDate: month.start, endDate: month.next });
  if (result.status === 'error') throw new UserFacingError(`the re-read of ${month.ym} before the close failed; nothing was closed: ${result.streams.find((st) => st.error)?.error ?? 'see the run manifest'}`, ExitCode.failed);
  const windows = result.streams.filter((st) => st.name === 'orders').reduce((n, st) => n + st.groups.reduce((m, g) => m + g.windows, 0), 0);
  const changed = await withLakeConnection(async (c) => {
    try {
      const r = await c.runAndReadAll(
        `SELECT count(*) AS n FROM read_parquet($glob, hive_partitioning = true, hive_types_autocast = false)
        WHERE _run_id = $run AND order_date >= $from AND order_date < $to`,
        { glob: join(config.output, 'lake', 'order_versions', '**', '*.parquet'), run: result.runId, from: month.start, to: month.next },
      );
      return Number(r.getRowObjectsJS()[0].n);
    } catch (err) {
      if (/No files found/i.test((err as Error).message)) return 0;
      throw err;
    }
  });
  return { run_id: result.runId, windows, changed };
}
