/** The extract's Landing over the lake: column types from each stream's declaration, atomic partition writes. */
import { lakeColumns, openPartitionWrite, quarantineRecord, type Column } from '../lake/index.js';
import type { StreamDefinition } from './define.js';
import type { Landing } from './landing.js';

export function lakeLanding(outDir: string, runId: string, extractedAt: Date): Landing & { unknownFields: Map<string, Record<string, number>> } {
  const columns = new Map<string, Column[]>();
  const unknownFields = new Map<string, Record<string, number>>();
  const madeDirs = new Set<string>();
  const columnsOf = (def: StreamDefinition) => {
    let c = columns.get(def.name);
    if (!c) columns.set(def.name, (c = lakeColumns(def.record, def.columns)));
    return c;
  };
  return {
    unknownFields,
    async open(def, partition, mode) {
      const writer = await openPartitionWrite({ outDir, stream: def.name, partition, columns: columnsOf(def), runId, extractedAt, mode, madeDirs });
      return {
        append: (records) => writer.append(records),
        abort: () => writer.abort(),
        async commit() {
          const result = await writer.commit();
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
