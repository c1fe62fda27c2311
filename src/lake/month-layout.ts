/**
 * Streams whose day partitions live in month folders, so that a closed month can become one file without
 * changing the Hive keys a glob reader sees (DuckDB refuses a glob whose files have different keys, and a
 * path value overrides a column of the same name, so a month file cannot sit in a day folder).
 *
 *   orders/organisation_group_id=G/order_month=YYYY-MM/day-YYYY-MM-DD.v<version>.parquet   a day, as the extract lands it
 *   orders/organisation_group_id=G/order_month=YYYY-MM/month-YYYY-MM.g<N>.parquet   a compacted (closed) month
 *   orders/…/order_month=YYYY-MM/month-YYYY-MM.upto-YYYY-MM-DD.g<N>.parquet   an open month's days up to DD
 *   credit/organisation_group_id=G/_snapshot_month=YYYY-MM/part-<run_id>-<n>.parquet  a refresh batch
 *   order_versions/organisation_group_id=G/order_month=YYYY-MM/part-<run_id>-<n>.parquet  an appended history batch
 *
 * Both carry `order_date` as a column. A folder holds day files, one month file, or (the open month) a
 * month file up to a day and the day files after it. A day re-extracted that a month file covers is
 * merged into it (its rows for that day replaced): the month's next generation switched in for it
 * (journal.ts). File names are never reused (file-names.ts).
 * The layout before this one (`order_date=YYYY-MM-DD/part-0.parquet`, the day in the path) is "legacy":
 * the extract keeps landing it while any legacy folder is left, and `perks compact` moves it over.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { dayStem, DAY_FILE, MONTH_FILE, monthFileName, versionsOf } from './file-names.js';
import { lakeRoot, partitionDir } from './paths.js';

export interface MonthLayout {
  /** The window partition key the extract gives (a local day), kept as a DATE column in the files. */
  day: string;
  /** The folder key: the day's month, YYYY-MM. */
  month: string;
  /** Row order of a compacted month (what readers filter and join on). */
  sort: string[];
}

export const MONTH_LAYOUTS: Readonly<Record<string, MonthLayout>> = {
  orders: { day: 'order_date', month: 'order_month', sort: ['order_date', 'order_id'] },
  // Per-user refresh batches (append mode: `part-<run_id>-<n>.parquet`, the refresh day as a column). A
  // compacted month keeps every row, ordered so each key's rows sit together, latest last.
  credit: { day: '_snapshot_date', month: '_snapshot_month', sort: ['user_id', '_extracted_at', '_run_id'] },
  interactions: { day: '_snapshot_date', month: '_snapshot_month', sort: ['id', '_extracted_at', '_run_id'] },
  // The order history, appended per window (`part-<run_id>-<n>.parquet`, the order's day as a column): a
  // closed month becomes one file, every version kept, by day (what readers filter on) then order and time.
  order_versions: {
    day: 'order_date',
    month: 'order_month',
    sort: ['order_date', 'order_id', '_extracted_at', '_run_id'],
  },
};

export { dayStem, monthFileName, DAY_FILE, MONTH_FILE };

/** What a month file's name says: its generation and the last day it covers (undefined: the whole month). */
export function monthFileInfo(path: string): { generation: number; upto?: string } | undefined {
  const m = MONTH_FILE.exec(path.slice(path.lastIndexOf('/') + 1));
  return m ? { generation: Number(m[3]), upto: m[2] } : undefined;
}
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The days a month file covers (its month up to `upto`, or whole), or undefined for another file. */
export function monthFileDays(path: string): string[] | undefined {
  const m = MONTH_FILE.exec(path.slice(path.lastIndexOf('/') + 1));
  if (!m) return undefined;
  const [y, mo] = m[1].split('-').map(Number);
  const last = new Date(Date.UTC(y, mo, 0)).getUTCDate(); // day 0 of the next month: this month's last
  const days = Array.from({ length: last }, (_, i) => `${m[1]}-${String(i + 1).padStart(2, '0')}`);
  return m[2] ? days.filter((d) => d <= m[2]) : days;
}

/** Where a day of a month-layout stream lands: its month folder, its file, and the day as a column. */
export interface DayPlacement {
  partition: Record<string, string>;
  /** The day file's stem (`day-YYYY-MM-DD`). */
  stem: string;
  dateColumns: Record<string, string>;
  /** The folder's compacted month file, if it covers the day: the day is merged into it instead. */
  monthFile?: string;
  layout: MonthLayout;
  day: string;
}

export function placeDay(outDir: string, stream: string, partition: Record<string, string>): DayPlacement | undefined {
  const layout = MONTH_LAYOUTS[stream];
  const day = layout ? partition[layout.day] : undefined;
  if (!layout || day === undefined || !DAY.test(day)) return undefined;
  const folder = { ...partition };
  delete folder[layout.day];
  folder[layout.month] = day.slice(0, 7);
  const dir = partitionDir(outDir, stream, folder);
  const month = monthFileIn(dir);
  const upto = month ? monthFileInfo(month)!.upto : undefined;
  const covers = month !== undefined && (upto === undefined || day <= upto);
  return {
    partition: folder,
    stem: dayStem(day),
    dateColumns: { [layout.day]: day },
    monthFile: covers ? month : undefined,
    layout,
    day,
  };
}

/** The compacted month file of a month folder (the newest generation, should a kill have left two). */
export function monthFileIn(dir: string): string | undefined {
  const names = namesIn(dir).filter((n) => MONTH_FILE.test(n));
  names.sort((a, b) => monthFileInfo(b)!.generation - monthFileInfo(a)!.generation);
  return names.length ? join(dir, names[0]) : undefined;
}

/** Whether a month-layout stream still has folders of the legacy layout (the day in the path). */
export function hasLegacyLayout(outDir: string, stream: string): boolean {
  const layout = MONTH_LAYOUTS[stream];
  if (!layout) return false;
  const root = join(lakeRoot(outDir), stream);
  return namesIn(root).some((g) => namesIn(join(root, g)).some((n) => n.startsWith(`${layout.day}=`)));
}

/**
 * The committed files holding a landed day partition, and the filter that picks the day's rows from them
 * (month folders hold several days); legacy: the day's own folder.
 */
export function dayFiles(
  outDir: string,
  stream: string,
  partition: Record<string, string>,
): { files: string[]; dayColumn?: string; day?: string } {
  const legacyDir = partitionDir(outDir, stream, partition);
  const legacy = namesIn(legacyDir).filter((n) => n.endsWith('.parquet') && !n.startsWith('.'));
  if (legacy.length) return { files: legacy.map((n) => join(legacyDir, n)) };
  const place = placeDay(outDir, stream, partition);
  if (!place) return { files: [] };
  const dir = partitionDir(outDir, stream, place.partition);
  const own = versionsOf(namesIn(dir), place.stem).map((n) => join(dir, n));
  if (own.length) return { files: own, dayColumn: place.layout.day, day: place.day };
  return { files: place.monthFile ? [place.monthFile] : [], dayColumn: place.layout.day, day: place.day };
}

export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
