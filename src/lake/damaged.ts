/**
 * Damaged lake files: a Parquet file cut short or overwritten (a disk that filled, a bad copy) is found
 * by its frame (PAR1 at both ends, a footer that fits), cheaply, without DuckDB. The extract re-extracts
 * the windows such files hold whatever their age (src/extract/windows/windowed-job.ts); until then the build and
 * `perks sql` name each one with the command that repairs it.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { DAY_FILE, MONTH_FILE, MONTH_LAYOUTS } from './month-layout.js';

const MAGIC = 'PAR1';

/** Whether `file` is not a whole Parquet file: missing magic at either end, or a footer longer than the file. */
export function isDamagedParquet(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size; // of the file opened: a merge may rename a new one in meanwhile
    if (size < 12) return true;
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(8);
    readSync(fd, head, 0, 4, 0);
    readSync(fd, tail, 0, 8, size - 8);
    const footer = tail.readUInt32LE(0);
    return head.toString('latin1') !== MAGIC || tail.subarray(4).toString('latin1') !== MAGIC || footer + 12 > size;
  } catch {
    return true;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The damaged Parquet files under `dir` (none when it does not exist). */
export function damagedFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.parquet'))
    .map((n) => join(dir, n))
    .filter(isDamagedParquet)
    .sort();
}

/**
 * A file's partitions, from its path under the lake: `{ organisation_group_id: '11', order_date: '2026-11-12' }`.
 * A day file of a month folder (month-layout.ts) gives its day under the day key, as the legacy folder did.
 */
export function partitionsOf(file: string): Record<string, string> {
  const parts: Record<string, string> = Object.fromEntries(
    file
      .split(sep)
      .filter((s) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(s))
      .map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]),
  );
  const day = DAY_FILE.exec(basename(file))?.[1];
  const layout = Object.values(MONTH_LAYOUTS).find((l) => parts[l.month] !== undefined);
  if (day && layout) parts[layout.day] = day;
  return parts;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** The first day of the month after `day`'s. */
function nextMonth(day: string): string {
  const [y, m] = day.split('-').map(Number);
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

/**
 * The command that repairs a damaged file of `stream`: its window extracted again (orders by day,
 * redemption stats by month); a snapshot file removed (a newer snapshot holds the current data, and the
 * next extract lands one).
 */
export function repairCommand(outDir: string, stream: string, file: string): string {
  const p = partitionsOf(relative(outDir, file));
  const group = p.organisation_group_id ? ` --groups ${p.organisation_group_id}` : '';
  // The order history: past versions cannot be extracted again (orders still hold the current values).
  if (stream === 'order_versions') return `rm ${quote(file)}`;
  // A compacted month file: removed, its days extracted again as day files.
  const month = MONTH_FILE.exec(basename(file));
  if (month && stream === 'orders') {
    const end = month[2] ? shift(month[2]) : nextMonth(`${month[1]}-01`);
    return `rm ${quote(file)} && perks extract --streams orders${group} --start-date ${month[1]}-01 --end-date ${end}`;
  }
  if (p.order_date)
    return `perks extract --streams orders${group} --start-date ${p.order_date} --end-date ${shift(p.order_date)}`;
  if (p.window_start)
    return `perks extract --streams redemption_stats${group} --start-date ${p.window_start} --end-date ${nextMonth(p.window_start)}`;
  return `rm ${quote(file)} && perks extract --streams ${stream}`;
}

function shift(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}
