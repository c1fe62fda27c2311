/**
 * The lake's partitions as verbs: a stream's groups, files, snapshot days and group-months, read from the folder
 * names here and nowhere else (scripts/check-layers.mjs refuses a partition folder name outside src/lake), so a
 * change of layout is made in one place. The month keys come from the month layouts (month-layout.ts).
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { commitDurably, tempPathFor } from '../shared/durable-file.js';
import { versionsOf } from './file-names.js';
import { LAKE_FILE_MODE, ensureLakeDir } from './modes.js';
import { MONTH_LAYOUTS, namesIn } from './month-layout.js';
import { partitionDir } from './paths.js';
import { GROUP_KEY, relativeStreamDir, streamDir } from './streams.js';

const GROUP = new RegExp(`^${GROUP_KEY}=(-?\\d+)$`);
/** A snapshot stream's day folder (groups, users, offers, the write-back's ledger). */
export const SNAPSHOT_KEY = '_snapshot_date';
const SNAPSHOT = new RegExp(`^${SNAPSHOT_KEY}=(\\d{4}-\\d{2}-\\d{2})$`);

/** A committed Parquet file's name (temporary files are hidden and never end in .parquet). */
const committed = (name: string) => name.endsWith('.parquet') && !basename(name).startsWith('.');

/** A stream's committed Parquet files (or one group's), sorted; [] when it has none. */
export function streamFiles(outDir: string, stream: string, group?: number | string): string[] {
  const dir = streamDir(outDir, stream, group);
  try {
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter(committed)
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** The group ids a stream has folders of, as the folders spell them (`organisation_group_id=<id>`). */
export function groupsOf(outDir: string, stream: string): string[] {
  try {
    return readdirSync(streamDir(outDir, stream)).flatMap((d) => GROUP.exec(d)?.[1] ?? []);
  } catch {
    return [];
  }
}

/** Whether a lake file lies in one of `groups`' folders. */
export function inGroups(file: string, groups: readonly (number | string)[]): boolean {
  return groups.some((g) => file.includes(`${sep}${GROUP_KEY}=${g}${sep}`));
}

/** One snapshot of a snapshot stream: its day, its folder and its committed files. */
export interface Snapshot {
  day: string;
  dir: string;
  files: string[];
}

/** The snapshot day folders in `dir`, oldest first (YYYY-MM-DD sorts as the days do). */
function snapshotsIn(dir: string): Snapshot[] {
  return namesIn(dir)
    .flatMap((n) => {
      const day = SNAPSHOT.exec(n)?.[1];
      return day ? [{ day, dir: join(dir, n), files: [] as string[] }] : [];
    })
    .sort((a, b) => a.day.localeCompare(b.day))
    .map((s) => ({
      ...s,
      files: namesIn(s.dir)
        .filter(committed)
        .map((f) => join(s.dir, f)),
    }));
}

/** A group's snapshots of a stream (or an organisation-wide stream's), oldest first, empty folders included. */
export function snapshotsOf(outDir: string, stream: string, group?: number | string): Snapshot[] {
  return snapshotsIn(streamDir(outDir, stream, group));
}

/**
 * The snapshots holding files, per group (or the one set of an organisation-wide stream's folders), each
 * oldest first.
 */
export function snapshotSets(outDir: string, stream: string): Snapshot[][] {
  const root = streamDir(outDir, stream);
  const withFiles = (dir: string) => snapshotsIn(dir).filter((s) => s.files.length > 0);
  const top = withFiles(root);
  if (top.length) return [top];
  return namesIn(root)
    .filter((n) => n.includes('=') && !n.startsWith('.'))
    .map((g) => withFiles(join(root, g)))
    .filter((s) => s.length > 0);
}

/** The folders in `dir`; null when it also holds a Parquet file (read by the views' glob, in no partition). */
const dirs = (dir: string): string[] | null => {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.some((e) => !e.isDirectory() && e.name.endsWith('.parquet'))) return null;
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
};

/**
 * The files of each group's latest snapshot folder of a stream (`<group>/_snapshot_date=<day>/`, the latest
 * day holding a file; a stream without group folders: its latest snapshot folder), relative to the output
 * directory, and how many files the stream holds; null when a folder is not of that shape.
 */
export function latestSnapshotFiles(
  outDir: string,
  stream: string,
  grouped: boolean,
): { files: string[]; total: number } | null {
  const root = streamDir(outDir, stream);
  const groups = grouped ? dirs(root) : [''];
  if (!groups) return null;
  const files: string[] = [];
  let total = 0;
  for (const g of groups) {
    if (grouped && !GROUP.test(g)) return null;
    const days = dirs(join(root, g));
    if (!days) return null;
    let latest: string[] = [];
    for (const day of days.sort()) {
      if (!SNAPSHOT.test(day)) return null;
      const entries = readdirSync(join(root, g, day), { withFileTypes: true });
      if (entries.some((e) => e.isDirectory())) return null;
      const parquet = entries
        .filter((e) => e.name.endsWith('.parquet'))
        .map((e) => [relativeStreamDir(stream), g, day, e.name].filter(Boolean).join('/'));
      total += parquet.length;
      if (parquet.length) latest = parquet;
    }
    files.push(...latest);
  }
  return { files, total };
}

/** A stream's files of one group and month, and a fingerprint of them: their names and sizes. */
export interface Partition {
  group: string;
  /** YYYY-MM */
  month: string;
  /** Paths relative to the output directory, as the lake views read them (`lake/orders/…`). */
  files: string[];
  fingerprint: string;
}

/**
 * A month folder's month: the layout's month folders (`order_month=YYYY-MM`) and the day folders before them
 * (`order_date=YYYY-MM-DD`, the legacy layout); undefined for another name.
 */
function monthOf(stream: string, folder: string): string | undefined {
  const layout = MONTH_LAYOUTS[stream] ?? MONTH_LAYOUTS.orders;
  const [key, value = ''] = folder.split('=', 2);
  if (key === layout.month && /^\d{4}-\d{2}$/.test(value)) return value;
  if (key === layout.day && /^\d{4}-\d{2}-\d{2}$/.test(value)) return value.slice(0, 7);
  return undefined;
}

/**
 * The group-months of a stream, keyed `<group>/<YYYY-MM>`; null when a folder is not of that shape (the
 * stream cannot be read by intervals). No lake file name is ever used twice (docs/dev/lake-contract.md), so
 * a group-month whose fingerprint is unchanged holds the very rows it held.
 */
export function monthPartitions(outDir: string, stream: string): Map<string, Partition> | null {
  const root = streamDir(outDir, stream);
  const found = new Map<string, { group: string; month: string; files: string[]; sizes: string[] }>();
  const groups = dirs(root);
  if (!groups) return null;
  for (const g of groups) {
    const group = GROUP.exec(g)?.[1];
    const months = dirs(join(root, g));
    if (group === undefined || !months) return null;
    for (const m of months) {
      const month = monthOf(stream, m);
      if (month === undefined) return null;
      const key = `${group}/${month}`;
      const entry = found.get(key) ?? { group, month, files: [], sizes: [] };
      for (const name of readdirSync(join(root, g, m)).sort()) {
        // a folder below a month (the glob reads its files too) is no shape of ours
        if (statSync(join(root, g, m, name)).isDirectory()) return null;
        if (!name.endsWith('.parquet')) continue;
        entry.files.push(`${relativeStreamDir(stream)}/${g}/${m}/${name}`);
        entry.sizes.push(`${m}/${name}:${statSync(join(root, g, m, name)).size}`);
      }
      found.set(key, entry);
    }
  }
  const partitions = new Map<string, Partition>();
  for (const [key, e] of found) {
    if (e.files.length === 0) continue;
    const fingerprint = createHash('sha256').update(e.sizes.sort().join('\n')).digest('hex').slice(0, 32);
    partitions.set(key, { group: e.group, month: e.month, files: e.files, fingerprint });
  }
  return partitions;
}

/** A snapshot stream's partition of one group and day (the write-back's ledger lands its entries so). */
export const snapshotPartition = (group: number | string, day: string): Record<string, string> => ({
  [GROUP_KEY]: String(group),
  [SNAPSHOT_KEY]: day,
});

/**
 * Lands one file `<stem>.parquet` that `write` makes (a COPY of the caller's own connection) in a partition
 * of `stream`: the lake's folders and modes, a temporary name startup hygiene knows, the one durable write.
 * Idempotent: a partition holding the stem already (maybe rewritten since under a new name, file-names.ts)
 * is left as it is; resolves false then.
 */
export async function appendPartition(
  outDir: string,
  stream: string,
  partition: Record<string, string>,
  stem: string,
  write: (temp: string) => Promise<void>,
): Promise<boolean> {
  const dir = partitionDir(outDir, stream, partition);
  await ensureLakeDir(outDir, dir); // personal data: 0700 folders, 0600 files, like the rest of the lake
  if (versionsOf(namesIn(dir), stem).length) return false;
  const target = join(dir, `${stem}.parquet`);
  const temp = tempPathFor(target);
  try {
    await write(temp);
    await chmod(temp, LAKE_FILE_MODE); // DuckDB's file follows the umask
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await commitDurably(temp, target);
  return true;
}
