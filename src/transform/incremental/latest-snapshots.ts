/**
 * `latest: lake_users` in a model's header: the model reads only each group's latest snapshot of that stream
 * (stg_users: the users of the latest listing). The snapshot retention keeps 14 daily snapshots and one per
 * earlier month (docs/assumptions.md), so a lake two years old holds about 38 snapshots of every user, and a
 * build reading them all reads 38 times the rows it uses: DuckDB prunes the files of a constant filter on a
 * partition column, not of a join on the latest day through the view's cast.
 *
 * When every model and test reading the view says so, the build narrows the view to each group's latest
 * snapshot folder for the whole build (a deferred ephemeral model reading it later sees the same), and puts
 * it back whole before the warehouse is stored, so analysts' `lake_users` still holds every snapshot. A model
 * that reads the history (no `latest:`) leaves the view whole for everyone.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { ModelGraphError } from '../errors.js';
import { LAKE_STREAMS, lakeViewName } from '../sources/lake-streams.js';
import { latestSnapshotFiles } from '../sources/lake-partitions.js';
import { narrowLakeView } from '../sources/lake-views.js';
import type { Node } from '../models/model-graph.js';

/** A lake view read through its latest snapshots: how many files it read, of how many the stream holds. */
export interface LatestSnapshots {
  view: string;
  files: number;
  of: number;
}

const SNAPSHOT_STREAMS = LAKE_STREAMS.filter((s) => s.listing);

/** Narrows each lake view the readers declare `latest:` for (see above); returns the views narrowed. */
export async function narrowToLatestSnapshots(
  conn: DuckDBConnection,
  outDir: string,
  readers: readonly Node[],
): Promise<LatestSnapshots[]> {
  const narrowed: LatestSnapshots[] = [];
  const declared = new Set<string>();
  for (const model of readers)
    for (const view of model.header.latest ?? []) {
      if (!SNAPSHOT_STREAMS.some((s) => lakeViewName(s.name) === view))
        throw new ModelGraphError(
          `${model.file}: latest: ${view} is not a lake view of listings by snapshot; ` +
            `expected one of ${SNAPSHOT_STREAMS.map((s) => lakeViewName(s.name)).join(', ')}`,
        );
      declared.add(view);
    }
  for (const view of declared) {
    if (readers.some((m) => m.dependsOn.includes(view) && !m.header.latest?.includes(view))) continue;
    const stream = SNAPSHOT_STREAMS.find((s) => lakeViewName(s.name) === view)!;
    const grouped = stream.partitions[0].name === 'organisation_group_id';
    const latest = latestSnapshotFiles(outDir, stream.name, grouped);
    if (!latest || latest.files.length === latest.total) continue;
    await narrowLakeView(conn, outDir, stream.name, latest.files);
    narrowed.push({ view, files: latest.files.length, of: latest.total });
  }
  return narrowed;
}

/** The views narrowed by narrowToLatestSnapshots, whole again. */
export async function widenLatestSnapshots(
  conn: DuckDBConnection,
  outDir: string,
  narrowed: readonly LatestSnapshots[],
): Promise<void> {
  for (const { view } of narrowed) await narrowLakeView(conn, outDir, view.slice('lake_'.length), 'all');
}
