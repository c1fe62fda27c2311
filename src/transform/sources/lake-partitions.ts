/**
 * A stream's files by group and month, read from the folder names, with a fingerprint of each group-month:
 * the names and sizes of its files. No lake file name is ever used twice (docs/dev/lake-contract.md): a
 * window landed again, a day merged into its month, personal values cleared are all new files, so a
 * group-month whose fingerprint is unchanged holds the very rows it held. Never the wall clock.
 * Also a listing's latest snapshot folder of each group (latestSnapshotFiles).
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { streamDir, relativeStreamDir } from '../../lake/index.js';

export interface Partition {
  group: string;
  /** YYYY-MM */
  month: string;
  /** Paths relative to the output directory, as the lake views read them (`lake/orders/…`). */
  files: string[];
  fingerprint: string;
}

const GROUP = /^organisation_group_id=(-?\d+)$/;
/** Month folders (order_month=YYYY-MM) and the earlier day folders (order_date=YYYY-MM-DD). */
const MONTH = /^(?:order_month=(\d{4}-\d{2})|order_date=(\d{4}-\d{2})-\d{2})$/;

/**
 * The first day of the month folder a row of a lake view over such a stream was read from (`alias` the view's
 * alias), a DATE: its partition column, which the views take from the path (lake-views.ts); `columns` the
 * view's partition columns (a stream without month folders has its days in the path).
 */
export function folderMonth(alias: string, columns: string[]): string {
  const day = `CAST(date_trunc('month', ${alias}.order_date) AS DATE)`;
  return columns.includes('order_month') ? `coalesce(CAST(${alias}.order_month || '-01' AS DATE), ${day})` : day;
}

/** The folders in `dir`; null when it also holds a Parquet file (read by the views' glob, in no group-month). */
const dirs = (dir: string): string[] | null => {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.some((e) => !e.isDirectory() && e.name.endsWith('.parquet'))) return null;
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
};

const SNAPSHOT = /^_snapshot_date=\d{4}-\d{2}-\d{2}$/;

/**
 * The files of each group's latest snapshot folder of `lake/<stream>` (`<group>/_snapshot_date=<day>/`, the
 * latest day holding a file; a stream without group folders: its latest snapshot folder), relative to the
 * output directory, and how many files the stream holds; null when a folder is not of that shape.
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
    // YYYY-MM-DD sorts as the days do
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

/**
 * The group-months of `lake/<stream>`, keyed `<group>/<YYYY-MM>`; null when a folder is not of that shape
 * (the stream cannot be read by intervals).
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
      const match = MONTH.exec(m);
      if (!match) return null;
      const month = match[1] ?? match[2];
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
