/**
 * Pages one listing into one open partition write: records appended page by page (memory stays flat),
 * rejected records quarantined, and the listing's own `total` kept for reconciliation.
 */
import type { CallArgs, ListName, PerksClient } from '../../api/index.js';
import type { PartitionWrite, Landing } from './landing.js';
import type { GroupTally } from '../result.js';
import { crashPoint } from '../../shared/crash-points.js';

export async function pageInto<N extends ListName>(
  client: PerksClient,
  landing: Landing,
  stream: string,
  write: PartitionWrite,
  tally: GroupTally,
  operation: N,
  args: CallArgs<N>,
  decorate?: (record: Record<string, unknown>) => void,
): Promise<{ records: number; total?: number }> {
  let records = 0;
  let total: number | undefined;
  for await (const page of client.paginate(operation, args)) {
    total ??= page.pagination?.total;
    for (const reject of page.rejects) await landing.quarantine(stream, reject.record, reject.message);
    tally.rejected += page.rejects.length;
    const rows = page.records as Record<string, unknown>[];
    if (decorate) rows.forEach(decorate);
    if (rows.length) await write.append(rows);
    crashPoint('after-page');
    records += rows.length;
  }
  tally.rows += records;
  if (total !== undefined) tally.expected = (tally.expected ?? 0) + total;
  return { records, total };
}
