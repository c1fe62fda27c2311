/** The extract's Landing over the lake: column types from each stream's declaration, atomic partition writes. */
import { hasLegacyLayout, lakeColumns, openPartitionWrite, placeDay, quarantineRecord, type Column } from '../lake/index.js';
import type { StreamDefinition } from './define.js';
import type { Landing } from './landing.js';

export function lakeLanding(outDir: string, runId: string, extractedAt: Date): Landing & { unknownFields: Map<string, Record<string, number>> } {
  const columns = new Map<string, Column[]>();
  const unknownFields = new Map<string, Record<string, number>>();
  const madeDirs = new Set<string>();
  const legacy = new Map<string, boolean>();
  const merges = new Map<string, Promise<unknown>>();
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
      const place = mode === 'replace' && !legacy.get(def.name) ? placeDay(outDir, def.name, partition) : undefined;
      const where = place
        ? { partition: place.partition, fileName: place.fileName, dateColumns: place.dateColumns, mergeInto: place.monthFile ? { file: place.monthFile, dayColumn: place.layout.day, day: place.day, sort: place.layout.sort } : undefined }
        : { partition };
      const writer = await openPartitionWrite({ outDir, stream: def.name, ...where, columns: columnsOf(def), runId, extractedAt, mode, madeDirs });
      return {
        append: (records) => writer.append(records),
        abort: () => writer.abort(),
        async commit() {
          // Days merged into one compacted month file take turns, or the later would drop the earlier.
          const file = place?.monthFile;
          const turn = (file && merges.get(file)) || Promise.resolve();
          const done = turn.then(() => writer.commit());
          if (file) merges.set(file, done.catch(() => undefined));
          const result = await done;
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
