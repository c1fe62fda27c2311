/**
 * What readers on other machines follow for a consistent view of the lake in the store: per stream,
 * `lake/<stream>/_current.json` (every current Parquet object of the stream, by key relative to the
 * stream's folder, with sizes), and per Hive partition a symlink manifest
 * `lake/_symlink/<stream>/<partition folders>/manifest` (the partition's current objects as full
 * `s3://` URIs, one a line: Hive's SymlinkTextInputFormat, which Athena, Trino's Hive connector and
 * Spark read). Both are written after the index commits a publish, each object replaced whole, and
 * before the objects they stop naming are removed: a reader that follows them never sees a month twice
 * (a compaction's new file and the files it replaces are never named together) and never half a publish.
 */
import type { StoreClient } from './client.js';
import type { RemoteIndex } from './indexes.js';

export interface StreamManifest {
  stream: string;
  generation: number;
  published_at: string;
  /** The stream's folder in the store: prefix each file's path with it. */
  base: string;
  files: { path: string; size: number }[];
}

/** Streams of the lake (the first folder under lake/, not `_…`). */
function streamOf(path: string): string | undefined {
  const m = /^lake\/([A-Za-z][A-Za-z0-9_]*)\/(.+\.parquet)$/.exec(path);
  return m ? m[1] : undefined;
}

export function changedStreams(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) {
    const s = streamOf(p);
    if (s) out.add(s);
  }
  return out;
}

export function allStreams(index: RemoteIndex): Set<string> {
  return changedStreams(Object.keys(index.files));
}

/** Current objects per stream and per partition folder (relative to the stream). */
function currentFiles(index: RemoteIndex, stream: string): { key: string; size: number }[] {
  return Object.entries(index.files)
    .filter(([path]) => streamOf(path) === stream)
    .map(([, e]) => ({ key: e.key, size: e.size }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

/**
 * Writes the manifests of `streams` from the index. `previous` (the index before this publish) tells
 * which partition manifests to remove: those of partitions left without files. Without it (finishing a
 * publish a killed command left), every manifest is written and the partition manifests in the store are
 * listed to find those to remove.
 */
export async function writeManifests(
  client: StoreClient,
  index: RemoteIndex,
  streams: Set<string>,
  previous?: RemoteIndex,
): Promise<number> {
  let writes = 0;
  if (!previous) {
    const listed = await client.list('lake/_symlink/');
    for (const o of listed) {
      const m = /^lake\/_symlink\/([^/]+)\/(?:(.+)\/)?manifest$/.exec(o.path);
      if (!m) continue;
      const partition = m[2] ?? '';
      const base = `lake/${m[1]}/`;
      const alive = Object.values(index.files).some(
        (e) => e.key.startsWith(base) && partitionOf(e.key, base) === partition,
      );
      if (!alive) await client.delete(o.path);
    }
  }
  for (const stream of [...streams].sort()) {
    const base = `lake/${stream}/`;
    const files = currentFiles(index, stream);
    const manifest: StreamManifest = {
      stream,
      generation: index.generation,
      published_at: index.published_at,
      base: client.url(base),
      files: files.map((f) => ({ path: f.key.slice(base.length), size: f.size })),
    };
    const byPartition = groupByPartition(
      files.map((f) => f.key),
      base,
    );
    const before = groupByPartition(previous ? currentFiles(previous, stream).map((f) => f.key) : [], base);
    for (const [partition, keys] of byPartition) {
      if (previous && sameList(before.get(partition), keys)) continue;
      await client.put(symlinkPath(stream, partition), Buffer.from(keys.map((k) => client.url(k)).join('\n') + '\n'));
      writes++;
    }
    await client.put(`${base}_current.json`, Buffer.from(JSON.stringify(manifest, null, 1)));
    writes++;
    for (const partition of before.keys())
      if (!byPartition.has(partition)) await client.delete(symlinkPath(stream, partition));
  }
  return writes;
}

const symlinkPath = (stream: string, partition: string) =>
  `lake/_symlink/${stream}/${partition ? `${partition}/` : ''}manifest`;

/** The Hive partition folders of a key under its stream's folder (`organisation_group_id=11/order_month=2026-10`). */
function partitionOf(key: string, base: string): string {
  return key
    .slice(base.length)
    .split('/')
    .slice(0, -1)
    .filter((p) => p.includes('='))
    .join('/');
}

function groupByPartition(keys: string[], base: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const key of keys) {
    const partition = partitionOf(key, base);
    out.set(partition, [...(out.get(partition) ?? []), key]);
  }
  return out;
}

function sameList(a: string[] | undefined, b: string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}
