/**
 * Names of committed lake files. No name is used twice: a file that is replaced (a window or snapshot
 * landed again, a day merged into its month, a month compacted, personal values cleared) is succeeded by a
 * file of a new name, and the journal's switch removes the old one (journal.ts). DuckDB opens a file more
 * than once in one query (its footer when it binds, its pages when it scans) and may cache its contents by
 * name, so a file renamed over another while a reader reads it gives that reader the footer of one and the
 * pages of the other ("TProtocolException: Invalid data", "Prefetch registered for bytes outside file");
 * under a new name a reader reads the old file whole, or finds it gone and asks again.
 *
 *   <stem>.v<version>.parquet   a window's or snapshot's file (`part`), a day of a month folder (`day-D`),
 *                               a rewritten append batch (`part-<run_id>-<n>`), a compacted month
 *                               (`month-M[.upto-D].g<N>`: its generation N grows by one with each rewrite)
 * The version is random; files written before versions (`part-0.parquet`, `day-D.parquet`,
 * `month-M.g<N>.parquet`) are read the same and replaced like any other.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { safeSegment } from './paths.js';

/** A day file's stem: its committed files are `<stem>.v<version>.parquet`. */
export const dayStem = (day: string) => `day-${safeSegment('day', day)}`;
/**
 * A month file: the whole month (closed), or its days up to `upto` (the month still open, older days
 * compacted); each rewrite is the next generation, under a new version.
 */
export const monthFileName = (month: string, generation: number, upto?: string) =>
  versionedName(`month-${month}${upto ? `.upto-${upto}` : ''}.g${generation}`);
export const DAY_FILE = /^day-(\d{4}-\d{2}-\d{2})(?:\.v[0-9a-z]+)?\.parquet$/;
export const MONTH_FILE = /^month-(\d{4}-\d{2})(?:\.upto-(\d{4}-\d{2}-\d{2}))?\.g(\d+)(?:\.v[0-9a-z]+)?\.parquet$/;

const VERSION = /\.v[0-9a-z]+(?=\.parquet$)/;

/** A version: 48 random bits, so no two files (of any process) are given the same name. */
export function newVersion(): string {
  return randomBytes(6).toString('hex');
}

/** `<stem>.v<version>.parquet` */
export const versionedName = (stem: string) => `${stem}.v${newVersion()}.parquet`;

/** A file's name without its version and extension: `day-2026-11-02.vabc.parquet` → `day-2026-11-02`. */
export const stemOf = (name: string) => name.replace(VERSION, '').replace(/\.parquet$/, '');

/**
 * The name of the file that replaces `path` (same folder): a month's next generation (above every generation
 * in the folder), a new version otherwise.
 */
export function successorOf(path: string): string {
  const dir = dirname(path);
  const month = MONTH_FILE.exec(basename(path));
  if (!month) return join(dir, versionedName(stemOf(basename(path))));
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // a folder not made yet holds no generation
  }
  const generations = names.map((n) => Number(MONTH_FILE.exec(n)?.[3] ?? 0));
  return join(dir, monthFileName(month[1], Math.max(Number(month[3]), ...generations) + 1, month[2]));
}

/** The committed files of `names` (a folder's) that are versions of `stem`. */
export const versionsOf = (names: string[], stem: string) =>
  names.filter((n) => n.endsWith('.parquet') && !n.startsWith('.') && stemOf(n) === stem);
