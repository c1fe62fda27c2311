/**
 * What the extract needs of the lake: open a partition write, append pages as they arrive,
 * commit atomically; and quarantine rejected records. Implemented over src/lake.
 */
import type { StreamDefinition } from '../../../pipelines/index.js';

export interface PartitionWrite {
  append(records: object[]): Promise<void>;
  commit(): Promise<{ rows: number; files: number; bytes: number }>;
  abort(): Promise<void>;
}

export interface Landing {
  /**
   * replace: the partition's previous files are replaced when the write commits (windows, snapshots).
   * append: the commit adds one file next to the partition's others (per-user refresh batches).
   */
  open(def: StreamDefinition, partition: Record<string, string>, mode: 'replace' | 'append'): Promise<PartitionWrite>;
  quarantine(stream: string, record: unknown, reason: string): Promise<void>;
}
