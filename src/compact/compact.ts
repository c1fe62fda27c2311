/**
 * Compaction of closed months: every closed month of a month-layout stream (orders) becomes one file per
 * group and month, sorted for readers, written under a temporary name, checked (row count and checksum
 * equal to the files it replaces, or the month is left as it was), then switched in: the journal names
 * the switch, the file is renamed in, the replaced files go, the journal is cleared (src/lake/journal.ts).
 * Legacy day folders (the day in the path) of open months move to day files in month folders the same way.
 * Runs under the output directory's lock; a kill at any point is finished or undone by the next run.
 */
import {
  LIST,
  listValue,
  quotedIdentifier as id,
  quotedString,
  VARCHAR,
  type DuckDBConnection,
} from '../shared/duckdb.js';
import { chmodSync, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  acquireLock,
  cleanTemporaryFiles,
  dayStem,
  ensureLakeDir,
  finishSwitch,
  LAKE_FILE_MODE,
  MONTH_LAYOUTS,
  monthFileInfo,
  monthFileName,
  scanSql,
  streamFiles,
  switchFiles,
  versionedName,
  withLakeConnection,
  writingOutput,
  type MonthLayout,
} from '../lake/index.js';
import { fsyncPath, tempPathFor } from '../shared/durable-file.js';
import { now as clockNow } from '../shared/clock.js';
import { UserFacingError } from '../shared/exit-codes.js';
import { crashPoint } from '../shared/crash-points.js';
import type { Output } from '../output/index.js';
import { CompactionError } from './errors.js';
import { fingerprint, sameFingerprint } from './fingerprint.js';
import { dayOfFile, isClosed, monthUnits, settledBefore, watermarkOf, type MonthUnit } from './months.js';
import { applyRetention, KEEP_DAYS, type StreamRetention } from './retention.js';

export interface CompactOptions {
  /** Days every run re-reads (PERKS_LOOKBACK_DAYS): months that end before them are closed. */
  lookbackDays: number;
  /** Today (default: the clock). */
  now?: Date;
  /** Take the output directory's lock (a caller that holds it passes false). */
  lock?: boolean;
  /** Daily snapshots kept before one per month (default KEEP_DAYS, 14). */
  keepSnapshotDays?: number;
}

export interface StreamCompaction {
  stream: string;
  /** Months rewritten into one file. */
  months: number;
  /** Legacy day folders moved into month folders (open months). */
  days: number;
  rows: number;
  filesBefore: number;
  filesAfter: number;
  ms: number;
}

export interface CompactResult {
  streams: StreamCompaction[];
  /** Snapshot streams: what retention removed (retention.ts). */
  snapshots: StreamRetention[];
  /** A switch a killed compaction left was finished first. */
  recovered: boolean;
  /** Months left as they were, one line each (the step then fails with the first). */
  failures: string[];
}

/** Row groups of a compacted file: DuckDB's default, a size readers skip by (min/max of order_date). */
const ROW_GROUP_SIZE = 122_880;

/** Compacts the lake of `output` (the command's Output; its folder is absolute). */
export async function compactLake(output: Output, options: CompactOptions): Promise<CompactResult> {
  const dir = output.dir;
  const lock = options.lock === false ? undefined : await acquireLock(dir);
  try {
    if (lock) await cleanTemporaryFiles(dir);
    const recovered = await finishSwitch(dir);
    const today = (options.now ?? clockNow()).toISOString().slice(0, 10);
    const result: CompactResult = { streams: [], snapshots: [], recovered, failures: [] };
    for (const [stream, layout] of Object.entries(MONTH_LAYOUTS)) {
      result.streams.push(await compactStream(dir, stream, layout, today, options.lookbackDays, result.failures));
    }
    result.snapshots = await applyRetention(dir, result.failures, options.keepSnapshotDays ?? KEEP_DAYS);
    if (result.failures.length) {
      const more = result.failures.length > 1 ? ` (and ${result.failures.length - 1} more month(s))` : '';
      throw new CompactionError(
        `compaction left a month (or snapshots) as it was: ${result.failures[0]}${more}; nothing was lost, the rest is compacted`,
      );
    }
    return result;
  } finally {
    await lock?.release();
  }
}

async function compactStream(
  outDir: string,
  stream: string,
  layout: MonthLayout,
  today: string,
  lookbackDays: number,
  failures: string[],
): Promise<StreamCompaction> {
  const started = Date.now();
  const tally: StreamCompaction = {
    stream,
    months: 0,
    days: 0,
    rows: 0,
    filesBefore: streamFiles(outDir, stream).length,
    filesAfter: 0,
    ms: 0,
  };
  for (const u of monthUnits(outDir, stream, layout)) {
    const cutoff = settledBefore(today, lookbackDays, watermarkOf(outDir, stream, u.groupDir));
    try {
      const whole = u.months.length === 1 && monthFileInfo(u.months[0])!.upto === undefined;
      if (isClosed(u.month, cutoff) || conflicts(u)) {
        if (u.legacy.length || u.days.length || u.months.length > 1 || (u.months.length === 1 && !whole)) {
          tally.rows += await switchIn(
            outDir,
            layout,
            u,
            u.legacy,
            [...u.days, ...u.months],
            join(u.dir, monthFileName(u.month, nextGeneration(u))),
          );
          tally.months += 1;
        }
        continue;
      }
      // The open month: its settled days (named by day; refresh batches wait for the month to close) into a
      // month file up to the day before the cut-off; the days a run still re-reads stay (or become) day files.
      const settled = u.days.filter((f) => (dayOfFile(f) ?? '9999') < cutoff);
      const oldLegacy = u.legacy.filter((l) => l.day < cutoff);
      if ((settled.length || oldLegacy.length) && !whole) {
        // Never less than a month file already covers (a longer lookback since): landing merges up to it.
        const covered =
          u.months
            .map((m) => monthFileInfo(m)!.upto ?? '')
            .sort()
            .at(-1) ?? '';
        const upto = [shiftDay(cutoff, -1), covered].sort().at(-1)!;
        tally.rows += await switchIn(
          outDir,
          layout,
          u,
          oldLegacy,
          [...settled, ...u.months],
          join(u.dir, monthFileName(u.month, nextGeneration(u), upto)),
        );
        tally.months += 1;
      }
      for (const l of u.legacy.filter((x) => x.day >= cutoff)) {
        tally.rows += await switchIn(outDir, layout, u, [l], [], join(u.dir, versionedName(dayStem(l.day))));
        tally.days += 1;
      }
    } catch (err) {
      if (!(err instanceof CompactionError) && err instanceof UserFacingError) throw err; // disk full, permissions: stop
      failures.push(`${stream} ${u.groupDir} month ${u.month}: ${firstLine(err)}`);
    }
  }
  tally.filesAfter = streamFiles(outDir, stream).length;
  tally.ms = Date.now() - started;
  return tally;
}

/** An open month whose legacy days cannot simply move: a month file already covers one, or a day file of the same day exists. */
function conflicts(u: MonthUnit): boolean {
  const covered = (day: string) =>
    u.months.some((m) => {
      const upto = monthFileInfo(m)!.upto;
      return upto === undefined || day <= upto;
    });
  return u.legacy.some((l) => covered(l.day) || u.days.some((d) => dayOfFile(d) === l.day));
}

function nextGeneration(u: MonthUnit): number {
  return Math.max(0, ...u.months.map((m) => monthFileInfo(m)?.generation ?? 0)) + 1;
}

const shiftDay = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Writes the rows of `legacy` and `files` to `target` (sorted), checks its fingerprint against theirs,
 * and switches it in for them. Returns the rows. Any failure before the switch leaves every input as it was.
 */
async function switchIn(
  outDir: string,
  layout: MonthLayout,
  u: MonthUnit,
  legacy: MonthUnit['legacy'],
  files: string[],
  target: string,
): Promise<number> {
  await ensureLakeDir(outDir, u.dir);
  const temp = tempPathFor(target);
  const groupKey = u.groupDir.split('=')[0];
  const pathKeys = [groupKey, layout.month, layout.day];
  const notPath = `COLUMNS(c -> c NOT IN (${pathKeys.map((k) => quotedString(k)).join(', ')}))`;
  const parts: string[] = [];
  const legacyFiles = legacy.flatMap((l) => l.files);
  if (legacyFiles.length) {
    parts.push(
      `SELECT ${notPath}, CAST(${id(layout.day)} AS DATE) AS ${id(layout.day)} FROM ${scanSql('$legacy', { autocast: false })}`,
    );
  }
  if (files.length) {
    // Day and month files carry the day as a column; a path key a rewrite may have copied in is dropped.
    parts.push(
      `SELECT ${notPath}, CAST(${id(layout.day)} AS DATE) AS ${id(layout.day)} FROM ${scanSql('$files', { hive: false })}`,
    );
  }
  const params = {
    ...(legacyFiles.length ? { legacy: listValue(legacyFiles) } : {}),
    ...(files.length ? { files: listValue(files) } : {}),
  };
  const types = {
    ...(legacyFiles.length ? { legacy: LIST(VARCHAR) } : {}),
    ...(files.length ? { files: LIST(VARCHAR) } : {}),
  };
  let rows = 0;
  try {
    await withLakeConnection(async (c) => {
      const table = `compact_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
      await readInputs(c, table, parts.join(' UNION ALL BY NAME '), params, types, [...legacyFiles, ...files]);
      try {
        const before = await fingerprint(c, `SELECT * FROM ${id(table)}`, {});
        await writingOutput('a compacted lake file', target, () =>
          c.run(
            `COPY (SELECT * FROM ${id(table)} ORDER BY ${layout.sort.map((s) => id(s)).join(', ')}) TO` +
              ` ${quotedString(temp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
          ),
        );
        const after = await fingerprint(
          c,
          `SELECT * FROM ${scanSql(quotedString(temp), { hive: false, unionByName: false })}`,
          {},
        );
        if (!sameFingerprint(before, after)) {
          throw new CompactionError(
            `the rewritten file does not hold the same rows (${after.rows} rows, checksum ${after.checksum}; expected ${before.rows}, ${before.checksum})`,
          );
        }
        rows = before.rows;
      } finally {
        await c.run(`DROP TABLE IF EXISTS ${id(table)}`);
      }
    });
    await writingOutput('a compacted lake file', target, async () => {
      chmodSync(temp, LAKE_FILE_MODE);
      await fsyncPath(temp);
    });
    await switchFiles(
      outDir,
      { stream: u.stream, temp, target, inputs: [...legacyFiles, ...files], dirs: legacy.map((l) => l.dir) },
      {
        beforeRename: () => crashPoint('compact-before-switch'),
        afterRename: () => crashPoint('compact-after-rename'),
        midRemove: () => crashPoint('compact-mid-remove'),
      },
    );
    return rows;
  } finally {
    if (existsSync(temp)) await rm(temp, { force: true });
  }
}

/** The inputs into a temporary table (read once); a file DuckDB cannot read is named in the one line. */
async function readInputs(
  c: DuckDBConnection,
  table: string,
  relation: string,
  params: Record<string, ReturnType<typeof listValue>>,
  types: Record<string, ReturnType<typeof LIST>>,
  files: string[],
): Promise<void> {
  try {
    await c.run(`CREATE TEMP TABLE ${id(table)} AS ${relation}`, params, types);
  } catch (err) {
    const bad = firstLine(err);
    const named = files.find((f) => bad.includes(f));
    throw new CompactionError(`${named ? `${named} cannot be read` : 'a file cannot be read'} (${bad})`);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
