/**
 * Lands one partition of a stream. Pages are appended as they arrive to a hidden NDJSON spill
 * file next to the partition (memory stays flat however long the stream); commit has DuckDB read
 * the spill with the explicit column types and write one zstd Parquet file under a temporary
 * name, fsyncs it and publishes it under a name no file ever had (file-names.ts).
 *
 * mode 'replace' (windows, snapshots): the new file `part.v<version>.parquet` replaces every committed
 * file of the partition's folder in one journaled switch (journal.ts): a reader following the journal
 * sees the old partition or the new, never half and never both, and no reader's file is ever rewritten.
 * mode 'append' (ledgers, per-user refreshes): a new `part-<run_id>-<n>.parquet` is renamed in
 * beside the existing files.
 * A month-layout stream (month-layout.ts) names its day's file by `stem` (replacing only that day's
 * versions), writes the day as a column (`dateColumns`), and a day re-extracted into a compacted month
 * is merged into the month file (`mergeInto`, asked at commit): the month's next generation is switched
 * in for it, so a reader sees the month before or after, never the day twice.
 */
import {
  DuckDBTimestampTZValue,
  TIMESTAMPTZ,
  VARCHAR,
  quotedIdentifier,
  quotedString,
  type DuckDBValue,
} from '../shared/duckdb.js';
import { chmod, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncPath, tempPathFor } from '../shared/durable-file.js';
import { sqlType, type Column } from './columns.js';
import { withLakeConnection } from './duckdb.js';
import { LakeSchemaError, writingOutput } from './errors.js';
import { successorOf, versionedName, versionsOf } from './file-names.js';
import { switchFiles } from './journal.js';
import { ensureLakeDir, LAKE_FILE_MODE } from './modes.js';
import { literalPath, partitionDir, safeSegment } from './paths.js';
import { RecordProjector, type FieldsSeen } from './projector.js';
import { crashIfPending, crashPoint, crashWhenExists } from '../shared/crash-points.js';

export interface PartitionWriteOptions {
  outDir: string;
  stream: string;
  /** Hive partition values, in path order, e.g. { organisation_group_id: '11', order_date: '2026-11-02' }. */
  partition: Record<string, string>;
  columns: readonly Column[];
  runId: string;
  extractedAt: Date;
  mode?: 'replace' | 'append';
  /** Folders this run already made (one set per run), so each parent folder is made once. */
  madeDirs?: Set<string>;
  /** Replace mode: the stem of the partition's file when the folder holds several (a day of a month folder). */
  stem?: string;
  /** Constant DATE columns written into the file (a day kept in a month folder). */
  dateColumns?: Record<string, string>;
  /**
   * Asked at commit: a compacted month file to merge into instead, whose rows for `day` are replaced by the
   * appended ones (sorted by `sort`) in its next generation. Callers commit in the month folder's turn.
   */
  mergeInto?: () => MergeInto | undefined;
}

export interface MergeInto {
  file: string;
  dayColumn: string;
  day: string;
  sort: string[];
}

export interface CommitResult {
  rows: number;
  files: number;
  bytes: number;
  /** The committed file. */
  path: string;
  /** Keys the records carried that are not columns (path → records carrying it): kept in `_extra` when it is a column. */
  unknownFields: Record<string, number>;
  /** Every field path the records carried, declared or not, with its JSON types (the schema history's input). */
  fields: FieldsSeen;
}

export interface PartitionWriter {
  readonly rows: number;
  append(records: readonly object[]): Promise<void>;
  commit(): Promise<CommitResult>;
  /** Drops what was appended; the partition's committed files are untouched. Safe to call twice. */
  abort(): Promise<void>;
}

/** Replace mode's file stem when the partition has a folder of its own. */
const PARTITION_STEM = 'part';
const SYSTEM_COLUMNS = ['_extracted_at', '_run_id'];
/** Spill bytes gathered before one write; bounds memory and keeps the syscall count low. */
const SPILL_CHUNK = 1 << 20;
/** A month file's rows of the other days than the one merged in. */
const others = (merge: MergeInto) =>
  `SELECT * FROM read_parquet($month, hive_partitioning = false) WHERE ${quotedIdentifier(merge.dayColumn)} IS DISTINCT FROM CAST($day AS DATE)`;

/** Append names claimed by commits under way in this process (nextAppendName). */
const claimedNames = new Set<string>();

/** Smaller row groups than DuckDB's default bound the Parquet writer's memory (see bench/lake.ts). */
const ROW_GROUP_SIZE = 50_000;

export async function openPartitionWrite(options: PartitionWriteOptions): Promise<PartitionWriter> {
  const dir = partitionDir(options.outDir, options.stream, options.partition);
  safeSegment('run id', options.runId);
  const keys = Object.keys(options.partition);
  const dated = Object.keys(options.dateColumns ?? {});
  const columns = options.columns.filter((c) => !keys.includes(c.name) && !dated.includes(c.name)); // partition values live in the path only
  const clash = columns.find((c) => SYSTEM_COLUMNS.includes(c.name));
  if (clash) throw new LakeSchemaError(`column "${clash.name}" of ${options.stream} clashes with a lake column`);
  const fresh = await ensureLakeDir(options.outDir, dir, options.madeDirs);
  const spillPath = tempPathFor(join(dir, 'spill.ndjson'));
  const spill = await writingOutput("a partition's spill file", dir, () => open(spillPath, 'wx', 0o600));
  return new SpillingPartitionWriter(
    options,
    dir,
    fresh,
    columns,
    spillPath,
    spill,
    new RecordProjector(columns, keys),
  );
}

class SpillingPartitionWriter implements PartitionWriter {
  rows = 0;
  private buffer = '';
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** The append name this writer claimed (nextAppendName). */
  private claimed?: string;

  constructor(
    private readonly options: PartitionWriteOptions,
    private readonly dir: string,
    /** The folder was made for this write: no earlier file to replace or remove. */
    private readonly fresh: boolean,
    private readonly columns: readonly Column[],
    private readonly spillPath: string,
    private readonly spill: FileHandle,
    private readonly projector: RecordProjector,
  ) {}

  async append(records: readonly object[]): Promise<void> {
    if (this.closed) throw new Error(`partition writer of ${this.options.stream} is already closed`);
    for (const record of records) this.buffer += this.projector.line(record);
    this.rows += records.length;
    if (this.buffer.length >= SPILL_CHUNK) await this.flush();
  }

  async commit(): Promise<CommitResult> {
    if (this.closed) throw new Error(`partition writer of ${this.options.stream} is already closed`);
    const merge = this.options.mode === 'append' ? undefined : this.options.mergeInto?.();
    const target = merge
      ? successorOf(merge.file)
      : join(
          this.dir,
          this.options.mode === 'append'
            ? await this.nextAppendName()
            : versionedName(this.options.stem ?? PARTITION_STEM),
        );
    const temp = tempPathFor(target);
    let renamed = false;
    try {
      await this.flush();
      await this.close();
      crashWhenExists('mid-parquet', temp);
      const { copied, kept } = await writingOutput('a lake file', target, () => this.copyToParquet(temp, merge));
      crashIfPending();
      if (copied !== this.rows + kept)
        throw new Error(`landed ${copied} rows of ${this.rows} appended (and ${kept} kept) to ${target}`);
      await writingOutput('a lake file', target, async () => {
        await chmod(temp, LAKE_FILE_MODE); // DuckDB's file follows the umask; personal data is the owner's only
        await fsyncPath(temp);
        await switchFiles(
          this.options.outDir,
          { stream: this.options.stream, temp, target, inputs: merge ? [merge.file] : await this.replaced() },
          {
            beforeRename: () => crashPoint('before-rename'),
            afterRename: () => {
              renamed = true;
              crashPoint('after-rename');
            },
          },
        );
      });
      const { size } = await stat(target);
      return {
        rows: this.rows,
        files: 1,
        bytes: size,
        path: target,
        unknownFields: Object.fromEntries(this.projector.unknownFields),
        fields: this.projector.fieldsSeen(),
      };
    } finally {
      if (this.claimed) claimedNames.delete(this.claimed);
      if (!renamed) await rm(temp, { force: true });
      await rm(this.spillPath, { force: true });
    }
  }

  async abort(): Promise<void> {
    this.buffer = '';
    await this.writing.catch(() => undefined); // a write under way finishes before the file goes
    await this.close();
    await rm(this.spillPath, { force: true });
  }

  /** Writes the buffer after any write still under way, so appends not awaited cannot interleave. */
  private flush(): Promise<void> {
    if (this.buffer) {
      const text = this.buffer;
      this.buffer = '';
      // writeFile loops over short writes: a full disk is an error, never a silently short spill
      this.writing = this.writing.then(() =>
        writingOutput("a partition's spill file", this.dir, () => this.spill.writeFile(text)),
      );
    }
    return this.writing;
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.spill.close();
  }

  /**
   * One COPY: the spill, read with the declared types, plus the run's columns, to zstd Parquet; merging,
   * also the month file's rows of the other days. `kept` counts those.
   */
  private async copyToParquet(temp: string, merge: MergeInto | undefined): Promise<{ copied: number; kept: number }> {
    const types = this.columns.map((c) => `${quotedString(c.name)}: ${quotedString(sqlType(c.type))}`).join(', ');
    const dates = Object.entries(this.options.dateColumns ?? {});
    const select = [
      ...this.columns.map((c) => quotedIdentifier(c.name)),
      ...dates.map(([name], i) => `CAST($date${i} AS DATE) AS ${quotedIdentifier(name)}`),
      '$extracted_at AS _extracted_at',
      '$run_id AS _run_id',
    ];
    let source = `SELECT ${select.join(', ')} FROM read_json($spill, format = 'newline_delimited', auto_detect = false, columns = {${types}})`;
    const params: Record<string, DuckDBValue> = Object.fromEntries(dates.map(([, day], i) => [`date${i}`, day]));
    let kept = 0;
    if (merge) {
      source = `SELECT * FROM (${source} UNION ALL BY NAME ${others(merge)}) ORDER BY ${merge.sort.map((c) => quotedIdentifier(c)).join(', ')}`;
      Object.assign(params, { month: literalPath(merge.file), day: merge.day });
    }
    const sql = `COPY (${source}) TO ${quotedString(temp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`;
    const micros = BigInt(this.options.extractedAt.getTime()) * 1000n;
    const copied = await withLakeConnection(async (connection) => {
      const result = await connection.runAndReadAll(
        sql,
        {
          ...params,
          spill: literalPath(this.spillPath),
          extracted_at: new DuckDBTimestampTZValue(micros),
          run_id: this.options.runId,
        },
        { spill: VARCHAR, extracted_at: TIMESTAMPTZ, run_id: VARCHAR },
      );
      return Number(result.getRows()[0]?.[0] ?? 0);
    });
    // Counted after the COPY (the month file is not replaced yet), so the COPY is the first thing a
    // kill scheduled at its start interrupts (the mid-parquet crash point).
    if (merge) {
      kept = await withLakeConnection(async (c) => {
        const r = await c.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM (${others(merge)})`, {
          month: literalPath(merge.file),
          day: merge.day,
        });
        return Number(r.getRowObjectsJS()[0].n);
      });
    }
    return { copied, kept };
  }

  /**
   * The next free `part-<run_id>-<n>.parquet`, claimed until the commit ends: several windows of a run may
   * append to one month folder at once (the order history), and two reading the folder before either
   * renamed in would pick the same name, the second replacing the first.
   */
  private async nextAppendName(): Promise<string> {
    const names = new Set(await readdir(this.dir));
    let n = 0;
    const name = () => `part-${this.options.runId}-${n}.parquet`;
    while (names.has(name()) || claimedNames.has(join(this.dir, name()))) n += 1;
    this.claimed = join(this.dir, name());
    claimedNames.add(this.claimed);
    return name();
  }

  /** Replace mode: the committed files the new one replaces (the day's versions, or the whole folder's files). */
  private async replaced(): Promise<string[]> {
    if (this.options.mode === 'append' || this.fresh) return [];
    const names = (await readdir(this.dir)).filter((n) => n.endsWith('.parquet') && !n.startsWith('.'));
    const stem = this.options.stem;
    return (stem ? versionsOf(names, stem) : names).map((n) => join(this.dir, n));
  }
}
