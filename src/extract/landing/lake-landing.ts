/** The extract's Landing over the lake: column types from each stream's declaration, atomic partition writes. */
import {
  hasLegacyLayout,
  inTurn,
  isDamagedParquet,
  lakeColumns,
  openPartitionWrite,
  partitionDir,
  placeDay,
  quarantineRecord,
  EXTRA_COLUMN,
  type Column,
  addFieldsSeen,
  type StreamSeen,
} from '../../lake/index.js';
import type { StreamDefinition } from '../../../pipelines/index.js';
import type { Landing } from './landing.js';

/** `beforeFirstWrite`: awaited once, before the run's first partition write or quarantined record. */
export function lakeLanding(
  outDir: string,
  runId: string,
  extractedAt: Date,
  beforeFirstWrite: () => Promise<void> = () => Promise.resolve(),
): Landing & { unknownFields: Map<string, Record<string, number>>; seen: Map<string, StreamSeen> } {
  let first: Promise<void> | undefined;
  const ready = () => (first ??= beforeFirstWrite());
  const columns = new Map<string, Column[]>();
  const unknownFields = new Map<string, Record<string, number>>();
  const seen = new Map<string, StreamSeen>();
  const madeDirs = new Set<string>();
  const legacy = new Map<string, boolean>();
  const columnsOf = (def: StreamDefinition) => {
    let c = columns.get(def.name);
    // Every stream lands what its records carry beyond the declaration in one JSON column (projector.ts).
    if (!c) columns.set(def.name, (c = lakeColumns(def.record, { ...def.columns, [EXTRA_COLUMN]: 'JSON' })));
    return c;
  };
  const streamSeen = (name: string) => {
    let s = seen.get(name);
    if (!s) seen.set(name, (s = { records: 0, fields: {} }));
    return s;
  };
  return {
    unknownFields,
    seen,
    async open(def, partition, mode) {
      await ready();
      // Month-layout streams land a day in its month folder, unless the lake still has the legacy layout.
      if (!legacy.has(def.name)) legacy.set(def.name, hasLegacyLayout(outDir, def.name));
      const found = legacy.get(def.name) ? undefined : placeDay(outDir, def.name, partition);
      // Appended batches (per-user refreshes) only move to the month folder; a replaced day has its own file,
      // or is merged into the month file covering it when it commits (a damaged one is healed instead:
      // windowed-job.ts).
      const mergeInto = () => {
        const now = placeDay(outDir, def.name, partition);
        return now?.monthFile && !isDamagedParquet(now.monthFile)
          ? { file: now.monthFile, dayColumn: now.layout.day, day: now.day, sort: now.layout.sort }
          : undefined;
      };
      const where = !found
        ? { partition }
        : mode === 'append'
          ? { partition: found.partition, dateColumns: found.dateColumns }
          : { partition: found.partition, stem: found.stem, dateColumns: found.dateColumns, mergeInto };
      // A month folder's days commit one at a time: two merges into one month file would each drop the
      // other's day, and a day's file must not appear while a merge covers it.
      const turn = mode === 'replace' && found ? partitionDir(outDir, def.name, found.partition) : undefined;
      const writer = await openPartitionWrite({
        outDir,
        stream: def.name,
        ...where,
        columns: columnsOf(def),
        runId,
        extractedAt,
        mode,
        madeDirs,
      });
      return {
        append: (records) => writer.append(records),
        abort: () => writer.abort(),
        async commit() {
          const result = await (turn ? inTurn(turn, () => writer.commit()) : writer.commit());
          const unknown = unknownFields.get(def.name) ?? {};
          for (const [field, n] of Object.entries(result.unknownFields)) unknown[field] = (unknown[field] ?? 0) + n;
          unknownFields.set(def.name, unknown);
          addFieldsSeen(streamSeen(def.name), result.rows, result.fields, Object.keys(def.columns));
          return result;
        },
      };
    },
    quarantine: async (stream, record, reason) => {
      await ready();
      await quarantineRecord({ outDir, stream, runId, record, reason });
    },
  };
}
