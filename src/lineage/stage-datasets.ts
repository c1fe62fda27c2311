/**
 * What each command but the build read and wrote, as datasets (datasets.ts names them): from the result the
 * command already has, without another read of the data.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtractResult } from '../extract/index.js';
import type { CompactResult } from '../compact/index.js';
import type { ForgetResult } from '../forget/index.js';
import type { WritebackResult } from '../writeback/index.js';
import { DEFAULT_SQL_DIR, LAKE_STREAMS } from '../transform/index.js';
import type { Dataset, DatasetIo, OutputDataset } from './events.js';
import { outputStatisticsFacet, schemaFacet } from './facets.js';
import { apiStream, lakeStream, warehouseTable, writtenFile, type Place } from './datasets.js';
import { REPORT_STREAMS, REPORT_TABLES } from './reads.js';
import { outputAt } from '../output/index.js';

/** A lake stream with its columns (as the lake's declaration, the one the warehouse's views read, has them). */
export function lakeDataset(place: Place, stream: string): Dataset {
  const declared = LAKE_STREAMS.find((s) => s.name === stream);
  const base = lakeStream(place, stream);
  return declared ? { ...base, facets: { schema: schemaFacet([...declared.partitions, ...declared.columns]) } } : base;
}

const written = (d: Dataset, stats: Parameters<typeof outputStatisticsFacet>[0]): OutputDataset => ({
  ...d,
  outputFacets: { outputStatistics: outputStatisticsFacet(stats) },
});

/** A file written, with its size. */
export function writtenFileDataset(place: Place, path: string, rowCount?: number): OutputDataset {
  const size = existsSync(path) ? statSync(path).size : undefined;
  return written(writtenFile(place, path), { rowCount, size });
}

/** `perks extract`: the API's streams in, the lake's streams out (rows, bytes and files this run landed). */
export function extractDatasets(place: Place, r: ExtractResult): DatasetIo {
  const ran = r.streams.filter((s) => s.status !== 'skipped');
  return {
    inputs: ran.flatMap((s) => apiStream(place, s.name)),
    outputs: ran.map((s) =>
      written(lakeDataset(place, s.name), {
        rowCount: s.rows,
        size: s.groups.reduce((n, g) => n + g.bytes, 0),
        fileCount: s.groups.reduce((n, g) => n + g.files, 0),
      }),
    ),
  };
}

/** The write-back's models: the files of sql/writeback (each a table of the warehouse). */
export function writebackModels(sqlDir: string = DEFAULT_SQL_DIR): string[] {
  const dir = join(sqlDir, 'writeback');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.sql'))
        .map((f) => f.slice(0, -4))
        .sort()
    : [];
}

/** `perks writeback`: its models in, the API's interactions and the ledger out (a dry run writes nothing). */
export function writebackDatasets(place: Place, r: WritebackResult): DatasetIo {
  return {
    inputs: writebackModels().map((m) => warehouseTable(place, m)),
    outputs: r.dry_run
      ? []
      : [
          ...apiStream(place, 'interactions').map((d) => written(d, { rowCount: r.sent })),
          written(writtenFile(place, r.ledger), { rowCount: r.sent + r.rejected }),
        ],
  };
}

/** What the revenue report reads. */
export const reportInputs = (place: Place): Dataset[] => [
  ...REPORT_TABLES.map((t) => warehouseTable(place, t)),
  ...REPORT_STREAMS.map((s) => lakeDataset(place, s)),
];

/** `perks report`: the marts in, the report's files out. */
export function reportDatasets(place: Place, files: readonly string[]): DatasetIo {
  return { inputs: reportInputs(place), outputs: files.map((f) => writtenFileDataset(place, f)) };
}

/** `perks close` / `perks reopen`: the month's figures in, the close record and the month's reports out. */
export function closeDatasets(place: Place, reports: readonly string[], reread: boolean): DatasetIo {
  return {
    inputs: [...(reread ? apiStream(place, 'orders') : []), ...reportInputs(place)],
    outputs: [
      writtenFileDataset(place, join(outputAt(place.dir).closes, 'closes.jsonl')),
      ...reports.map((f) => writtenFileDataset(place, f)),
    ],
  };
}

/** `perks compact`: each stream's closed months read and written again as one file per group and month. */
export function compactDatasets(place: Place, r: CompactResult): DatasetIo {
  const streams = [...new Set([...r.streams.map((s) => s.stream), ...r.snapshots.map((s) => s.stream)])].sort();
  const rows = new Map(r.streams.map((s) => [s.stream, s.rows]));
  return {
    inputs: streams.map((s) => lakeDataset(place, s)),
    outputs: streams.map((s) => written(lakeDataset(place, s), { rowCount: rows.get(s) })),
  };
}

/** `perks forget`: the streams whose files held the users, rewritten without them. */
export function forgetDatasets(place: Place, r: ForgetResult): DatasetIo {
  const streams = Object.keys(r.streams).sort();
  return {
    inputs: streams.map((s) => lakeDataset(place, s)),
    outputs: streams.map((s) => lakeDataset(place, s)),
  };
}
