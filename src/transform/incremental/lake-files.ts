/**
 * The lake group-month folders a model built by intervals reads (incremental.ts): each folder's fingerprint, kept
 * in the model's state to find the intervals whose files changed, and its files, which the lake views are narrowed
 * to when the dirty intervals are rebuilt and when a lookup's keys are read.
 */
import { relativeStreamDir } from '../../lake/index.js';
import { monthPartitions, type Partition } from '../sources/lake-partitions.js';
import { LAKE_STREAMS } from '../sources/lake-streams.js';

/** A lake group-month folder of a stream, with its files and fingerprint. */
export type LakeFile = Partition & { stream: string };

export interface LakeFiles {
  /** `<stream>/<group>/<YYYY-MM>` → fingerprint of the group-month's files (ModelState.partitions). */
  partitions: Record<string, string>;
  /** The same keys → the folder. */
  files: Map<string, LakeFile>;
  /** Why the lake cannot be read by intervals (a stream not in group and month folders), else undefined. */
  unsupported: string | undefined;
}

/** The group-month folders of the lake views `lakeDeps` (`lake_<stream>`) under `outDir`. */
export function lakeFiles(outDir: string, lakeDeps: string[]): LakeFiles {
  const found: LakeFiles = { partitions: {}, files: new Map(), unsupported: undefined };
  for (const view of lakeDeps) {
    const stream = view.slice('lake_'.length);
    const parts = monthPartitions(outDir, stream);
    if (!parts) {
      found.unsupported = `${relativeStreamDir(stream)} is not in group and month folders`;
      continue;
    }
    for (const [key, p] of parts) {
      found.partitions[`${stream}/${key}`] = p.fingerprint;
      found.files.set(`${stream}/${key}`, { ...p, stream });
    }
  }
  return found;
}

/** A lake stream's partition columns, in path order. */
export const partitionsOf = (stream: string): string[] =>
  LAKE_STREAMS.find((s) => s.name === stream)?.partitions.map((p) => p.name) ?? [];
