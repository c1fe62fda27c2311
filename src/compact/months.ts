/**
 * What a month-layout stream's folders hold, month by month and group by group, and which months are
 * closed: a month whose every day is older than the lookback (no run re-reads it; a backfill or a full
 * refresh that does re-read a day merges it into the month file, see src/lake/month-layout.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAY_FILE, MONTH_FILE, lakeRoot, stateRoot, type MonthLayout } from '../lake/index.js';
import { namesIn } from '../lake/month-layout.js';

export interface MonthUnit {
  stream: string;
  /** `organisation_group_id=G` */
  groupDir: string;
  month: string;
  /** Legacy day folders (`order_date=D`) of the month: their files, the day from the path. */
  legacy: { day: string; dir: string; files: string[] }[];
  /** Day files and month files in the month folder (`order_month=M`). */
  days: string[];
  months: string[];
  /** The month folder (made when the month only has legacy folders yet). */
  dir: string;
}

export function monthUnits(outDir: string, stream: string, layout: MonthLayout): MonthUnit[] {
  const root = join(lakeRoot(outDir), stream);
  const units = new Map<string, MonthUnit>();
  const unit = (groupDir: string, month: string): MonthUnit => {
    const key = `${groupDir}/${month}`;
    let u = units.get(key);
    if (!u)
      units.set(
        key,
        (u = {
          stream,
          groupDir,
          month,
          legacy: [],
          days: [],
          months: [],
          dir: join(root, groupDir, `${layout.month}=${month}`),
        }),
      );
    return u;
  };
  const parquet = (dir: string) => namesIn(dir).filter((n) => n.endsWith('.parquet') && !n.startsWith('.'));
  for (const groupDir of namesIn(root)
    .filter((n) => !n.startsWith('.'))
    .sort()) {
    for (const entry of namesIn(join(root, groupDir)).sort()) {
      const [key, value] = entry.split('=');
      if (key === layout.day && /^\d{4}-\d{2}-\d{2}$/.test(value ?? '')) {
        const dir = join(root, groupDir, entry);
        const files = parquet(dir).map((n) => join(dir, n));
        if (files.length) unit(groupDir, value.slice(0, 7)).legacy.push({ day: value, dir, files });
      } else if (key === layout.month && /^\d{4}-\d{2}$/.test(value ?? '')) {
        const u = unit(groupDir, value);
        for (const n of parquet(u.dir)) {
          if (MONTH_FILE.test(n)) u.months.push(join(u.dir, n));
          else if (DAY_FILE.test(n)) u.days.push(join(u.dir, n));
          else u.days.push(join(u.dir, n)); // any other committed file of the month is one of its parts too
        }
      }
    }
  }
  return [...units.values()];
}

/** The first day of the month after `month` (YYYY-MM). */
export function nextMonthStart(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

/**
 * The first day a run may re-read; older days are settled. The windowed extract re-reads from its state's
 * watermark (the group's local today when it last ran) minus the lookback; without a state, today minus
 * the lookback and one day more (a group's local day may lag UTC's by one).
 */
export function settledBefore(today: string, lookbackDays: number, watermark?: string): string {
  const from = watermark && /^\d{4}-\d{2}-\d{2}$/.test(watermark) && watermark <= today ? watermark : undefined;
  return new Date(Date.parse(`${from ?? today}T00:00:00Z`) - (lookbackDays + (from ? 0 : 1)) * 86_400_000)
    .toISOString()
    .slice(0, 10);
}

/** The watermark of a group's windowed state (`<out>/state/<stream>/<group>.json`), if any. */
export function watermarkOf(outDir: string, stream: string, groupDir: string): string | undefined {
  const key = groupDir.split('=')[1];
  if (!key || !/^[A-Za-z0-9][A-Za-z0-9_.+-]*$/.test(key)) return undefined;
  try {
    const state = JSON.parse(readFileSync(join(stateRoot(outDir), stream, `${key}.json`), 'utf8')) as {
      watermark?: unknown;
    };
    return typeof state.watermark === 'string' ? state.watermark : undefined;
  } catch {
    return undefined;
  }
}

/** Closed: the month ends before the first day a run re-reads. */
export function isClosed(month: string, cutoff: string): boolean {
  return nextMonthStart(month) <= cutoff;
}

/** The day a day file holds (its name says it), or undefined (a refresh batch: its day is inside). */
export function dayOfFile(path: string): string | undefined {
  return DAY_FILE.exec(path.slice(path.lastIndexOf('/') + 1))?.[1];
}
