/** The extract's Landing over the lake: column types from each stream's declaration, atomic partition writes. */
import {
  hasLegacyLayout,
  inTurn,
  isDamagedParquet,
  lakeColumns,
  openPartitionWrite,
  placeDay,
  quarantineRecord,
  type Column,
} from '../lake/index.js';
import type { StreamDefinition } from '../../pipelines/index.js';
import type { Landing } from './landing.js';

export function lakeLanding(
  outDir: string,
  runId: string,
  extractedAt: Date,
): Landing & { unknownFields: Map<string, Record<string, number>> } {
  const columns = new Map<string, Column[]>();
  const unknownFields = new Map<string, Record<string, number>>();
  const madeDirs = new Set<string>();
  const legacy = new Map<string, boolean>();
  const columnsOf = (def: StreamDefinition) => {
    let c = columns.get(def.name);
    if (!c) columns.set(def.name, (c = lakeColumns(def.record, def.columns)));
    return c;
  };
  return {
    unknownFields,
    async open(def, partition, mode) {
      // Month-layout streams land a day in its month folder, unless the lake still has the legacy layout.
      if (!legacy.has(def.name)) legacy.set(def.name, hasLegacyLayout(outDir, def.name));
      const found = legacy.get(def.name) ? undefined : placeDay(outDir, def.name, partition);
      // Appended batches (per-user refreshes) only move to the month folder; a replaced day has its own file,
      // or is merged into the month file covering it (a damaged one is healed instead: windowed-job.ts).
      const where = !found
        ? { partition }
        : mode === 'append'
          ? { partition: found.partition, dateColumns: found.dateColumns }
          : {
              partition: found.partition,
              fileName: found.fileName,
              dateColumns: found.dateColumns,
              mergeInto:
                found.monthFile && !isDamagedParquet(found.monthFile)
                  ? { file: found.monthFile, dayColumn: found.layout.day, day: found.day, sort: found.layout.sort }
                  : undefined,
            };
      const place = mode === 'replace' && where.mergeInto ? found : undefined;
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
          // Days merged into one compacted month file take turns, or the later would drop the earlier.
          const file = place?.monthFile;
          const result = await (file ? inTurn(file, () => writer.commit()) : writer.commit());
          const seen = unknownFields.get(def.name) ?? {};
          for (const [field, n] of Object.entries(result.unknownFields)) seen[field] = (seen[field] ?? 0) + n;
          unknownFields.set(def.name, seen);
          return result;
        },
      };
    },
    quarantine: (stream, record, reason) => quarantineRecord({ outDir, stream, runId, record, reason }),
  };
}
