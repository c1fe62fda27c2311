/**
 * 2. Readers during writes: loops that read the lake's orders as analysts and BI tools would while
 * extracts and compactions replace its files. The sandbox's orders do not change meanwhile, so every
 * (group, day) a reader sees must hold exactly the sandbox's orders of that local day: fewer or other keys
 * is a torn window, a key twice is a window (or month) counted twice.
 *
 * Two independent readers follow the documented consistent view (the journal before and after, again on a
 * switch or a file gone: readConsistently): DuckDB with its default settings (file cache on) and hyparquet.
 * A third reads the plain glob as a BI tool pointed at the folder would: it may meet a file removed under
 * it or a window twice during a switch (as documented), but never a broken file.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { cpSync, existsSync, readdirSync, renameSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { dayWindows, extract, shiftDay } from '../../../src/extract/index.js';
import { readConsistently, readJournal } from '../../../src/compact/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { todayUtc } from '../../../src/shared/clock.js';
import { runCli } from '../../support/cli.js';
import { orgConfig, orgEnv, testSandbox } from '../../support/sandbox.js';
import { withScratch, type Scratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

export type ReaderKind = 'duckdb' | 'hyparquet' | 'plain';

export interface ReadTally {
  /** Answers taken (through the journal), or plain reads made. */
  reads: number;
  /** Reads that failed: a broken file, or anything but a file gone during a switch. */
  errors: number;
  /** (group, day) windows whose keys were not the sandbox's. */
  torn: number;
  /** (group, day) windows holding a key twice (a month file and its day files, two versions of a day). */
  doubled: number;
  /** Through the journal: answers dropped and asked again (a switch meanwhile, or a file gone). */
  retries: number;
  /** Plain reads only: a file removed between the listing and the read (documented; not an error). */
  gone: number;
  problems: string[];
}

const emptyTally = (): ReadTally => ({ reads: 0, errors: 0, torn: 0, doubled: 0, retries: 0, gone: 0, problems: [] });

/** Orders per `${group}/${local day}` from `start` to tomorrow, from the sandbox's world. */
export function ordersPerDay(sandbox: Sandbox, start: string): Map<string, number> {
  const counts = new Map<string, number>();
  const end = shiftDay(todayUtc(), 2);
  for (const g of sandbox.world.groups) {
    for (const w of dayWindows(start, end, g.timezone)) {
      counts.set(
        `${g.id}/${w.startDay}`,
        sandbox.world.ordersOf(g.id, { from: w.start.getTime(), to: w.end.getTime() - 1 }).length,
      );
    }
  }
  return counts;
}

/** What a reader saw of one window: its rows and distinct keys. */
type Seen = Map<string, { rows: number; keys: number }>;

/** DuckDB's and the file system's words for a file removed between a listing and its read. */
const GONE = /No such file|No files found|Cannot open file|does not exist|ENOENT/i;

/**
 * Starts the readers on the lake of the newest of `dirs()` (the one being written), each in its own loop,
 * until stopped, `pauseMs` between one read and the next (0: as fast as they can, yielding to the event loop).
 */
export function startReaders(
  sandbox: Sandbox,
  start: string,
  dirs: () => string[],
  options: { kinds?: ReaderKind[]; pauseMs?: number } = {},
): { tallies: Record<ReaderKind, ReadTally>; stop(): Promise<Record<ReaderKind, ReadTally>> } {
  const kinds = options.kinds ?? ['duckdb', 'hyparquet', 'plain'];
  const truth = ordersPerDay(sandbox, start);
  const tallies = Object.fromEntries(kinds.map((k) => [k, emptyTally()])) as Record<ReaderKind, ReadTally>;
  let stopped = false;
  const loops = kinds.map(async (kind) => {
    const read = await readerOf(kind);
    try {
      while (!stopped) {
        const dir = dirs().at(-1);
        if (!dir || !existsSync(join(dir, 'lake', 'orders'))) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        await readOnce(kind, read, dir, truth, tallies[kind]);
        await new Promise((r) => (options.pauseMs ? setTimeout(r, options.pauseMs) : setImmediate(r)));
      }
    } finally {
      read.close();
    }
  });
  return {
    tallies,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return tallies;
    },
  };
}

interface Reader {
  /** The windows of the lake's orders, read once (no journal). */
  windows(dir: string): Promise<Seen>;
  close(): void;
}

async function readerOf(kind: ReaderKind): Promise<Reader> {
  if (kind === 'hyparquet') return { windows: viaHyparquet, close: () => undefined };
  // A DuckDB of its own with the default settings (the external file cache on), as an analyst's would be.
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  return {
    windows: (dir) => viaDuckDB(connection, dir),
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function readOnce(
  kind: ReaderKind,
  reader: Reader,
  dir: string,
  truth: Map<string, number>,
  tally: ReadTally,
): Promise<void> {
  let seen: Seen | undefined;
  try {
    if (kind === 'plain') seen = await reader.windows(dir);
    else {
      let attempts = 0;
      seen = await readConsistently(
        dir,
        () => {
          attempts += 1;
          return reader.windows(dir);
        },
        { timeoutMs: 120_000, pauseMs: 5 },
      );
      tally.retries += attempts - 1;
    }
  } catch (err) {
    const message = (err as Error).message;
    if (kind === 'plain' && GONE.test(message)) {
      tally.gone += 1;
      return;
    }
    tally.reads += 1;
    tally.errors += 1;
    if (tally.problems.length < 5) tally.problems.push(`${kind}: read error: ${message.split('\n')[0]}`);
    return;
  }
  tally.reads += 1;
  for (const [window, { rows, keys }] of seen) {
    const want = truth.get(window) ?? 0;
    if (rows > keys) {
      tally.doubled += 1;
      if (kind !== 'plain' && tally.problems.length < 5)
        tally.problems.push(`${kind}: window ${window} holds ${rows} rows of ${keys} orders (counted twice)`);
    }
    if (keys !== want) {
      tally.torn += 1;
      if (tally.problems.length < 5)
        tally.problems.push(`${kind}: window ${window}: read ${keys} orders, the sandbox holds ${want}`);
    }
  }
}

async function viaDuckDB(c: DuckDBConnection, dir: string): Promise<Seen> {
  const r = await c.runAndReadAll(
    `SELECT organisation_group_id::VARCHAR || '/' || order_date::VARCHAR AS k, count(*)::BIGINT AS n, count(DISTINCT order_id)::BIGINT AS u
     FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) GROUP BY ALL`,
    { glob: join(dir, 'lake', 'orders', '**', '*.parquet') },
  );
  return new Map(r.getRowObjectsJS().map((x) => [x.k as string, { rows: Number(x.n), keys: Number(x.u) }]));
}

/** Each committed file read whole by hyparquet; the group (and a legacy file's day) from its Hive path. */
async function viaHyparquet(dir: string): Promise<Seen> {
  const root = join(dir, 'lake', 'orders');
  const files = readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.parquet') && !f.split(sep).at(-1)!.startsWith('.'));
  if (!files.length) throw new Error(`No files found under ${root}`);
  const keys = new Map<string, Set<string>>();
  const rows = new Map<string, number>();
  for (const file of files) {
    const path = Object.fromEntries(
      relative(root, join(root, file))
        .split(sep)
        .slice(0, -1)
        .map((s) => s.split('=')),
    );
    const legacy = path.order_date !== undefined;
    const records = await parquetReadObjects({
      file: await asyncBufferFromFile(join(root, file)),
      columns: legacy ? ['order_id'] : ['order_id', 'order_date'],
      compressors,
    });
    for (const record of records) {
      const day = legacy ? path.order_date : dayOf(record.order_date);
      const window = `${path.organisation_group_id}/${day}`;
      rows.set(window, (rows.get(window) ?? 0) + 1);
      let set = keys.get(window);
      if (!set) keys.set(window, (set = new Set()));
      set.add(String(record.order_id));
    }
  }
  return new Map([...rows].map(([w, n]) => [w, { rows: n, keys: keys.get(w)!.size }]));
}

function dayOf(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

/** One line of the readers' figures: reads, errors, torn and doubled windows, retries (and for plain reads, files gone). */
export function describeReads(t: Record<ReaderKind, ReadTally>): string {
  const through = (['duckdb', 'hyparquet'] as const).filter((k) => t[k]);
  const sum = (f: (x: ReadTally) => number) => through.reduce((n, k) => n + f(t[k]), 0);
  const parts = [
    `${sum((x) => x.reads)} reads through the journal (${through.map((k) => `${k} ${t[k].reads}`).join(', ')}): ${sum((x) => x.errors)} read errors, ${sum((x) => x.torn)} torn windows, ${sum((x) => x.doubled)} counted twice, ${sum((x) => x.retries)} asked again after a switch`,
  ];
  if (t.plain)
    parts.push(
      `plain glob ${t.plain.reads} reads: ${t.plain.errors} broken files, ${t.plain.torn} torn windows, ${t.plain.gone} met a file removed mid-switch, ${t.plain.doubled} saw a window twice mid-switch`,
    );
  return parts.join('; ');
}

/** The problems that fail a row: any error or torn window; a window twice only through the journal. */
export function readProblems(t: Record<ReaderKind, ReadTally>): string[] {
  return Object.values(t).flatMap((x) => x.problems);
}

export interface ReadersOptions extends ScenarioOptions {
  /** Reads through the journal to reach (both readers together) before the writers stop. */
  reads: number;
  /** Give up (a failed row) when the reads are not reached in this long. */
  maxMs: number;
  /** Local days extracted. */
  days?: number;
}

/**
 * Readers while the lake's files are replaced as fast as the machine allows: cycles of `perks compact`
 * (day files of closed months into month files), `perks extract --full-refresh` (every day landed again:
 * days merged into their month files, day files replaced) and an incremental `perks extract` with a shorter
 * lookback (its compaction moves the open month's cut), each a child process, on a fresh copy of a lake
 * of day files each cycle; the readers read the copy being written.
 */
export async function readersScenario(o: ReadersOptions): Promise<Row[]> {
  const sandbox = await testSandbox({ seed: o.seed % 1000 });
  try {
    return await withScratch('readers', (scratch) => writeWhileReading(sandbox, scratch, o));
  } finally {
    await sandbox.close();
  }
}

async function writeWhileReading(sandbox: Sandbox, scratch: Scratch, o: ReadersOptions): Promise<Row[]> {
  const start = shiftDay(todayUtc(), -(o.days ?? 25));
  // A lake of day files only (the library's extract does not compact), copied whole for each cycle.
  const base = scratch.dir('base');
  const landed = await extract(orgConfig(sandbox, base, { PERKS_START_DATE: start }), {
    output: outputAt(base),
    streams: ['orders'],
  });
  if (landed.status !== 'success') return [row('readers: base lake', 1, [`extract ${landed.status}`], 'failed')];
  const dirs: string[] = [];
  const readers = startReaders(sandbox, start, () => dirs);
  const problems: string[] = [];
  const started = performance.now();
  let extracts = 0;
  let compactions = 0;
  let switches = 0;
  let cycles = 0;
  const through = (t: Record<ReaderKind, ReadTally>) => t.duckdb.reads + t.hyparquet.reads;
  try {
    for (;;) {
      cycles += 1;
      const out = scratch.dir(`cycle${cycles}`);
      // Whole before any reader looks: copied beside, then renamed in.
      cpSync(join(base, 'state'), join(out, 'state'), { recursive: true });
      cpSync(join(base, 'lake'), join(out, '.lake-copy'), { recursive: true });
      renameSync(join(out, '.lake-copy'), join(out, 'lake'));
      dirs.push(out);
      const env = (extra: Record<string, string> = {}) => orgEnv(sandbox, out, { PERKS_START_DATE: start, ...extra });
      for (const [args, extra] of [
        [['compact'], {}],
        [['extract', '--quiet', '--streams', 'orders', '--full-refresh'], {}],
        [['extract', '--quiet', '--streams', 'orders'], { PERKS_LOOKBACK_DAYS: '3' }],
      ] as [string[], Record<string, string>][]) {
        const r = await runCli(args, env(extra), { timeoutMs: 600_000 });
        if (r.code !== 0)
          problems.push(`cycle ${cycles}: perks ${args.join(' ')} exited ${r.code}: ${r.stderr.slice(-200)}`);
        if (args[0] === 'extract') extracts += 1;
        compactions += 1; // an extract compacts after landing, as perks compact does
      }
      switches += readJournal(out).generation / 2;
      const reads = through(readers.tallies);
      o.log(`readers: cycle ${cycles}, ${reads} reads through the journal, ${switches} switches`);
      if (problems.length || reads >= o.reads) break;
      if (performance.now() - started > o.maxMs) {
        problems.push(`only ${reads} reads of ${o.reads} in ${Math.round(o.maxMs / 1000)} s`);
        break;
      }
    }
  } finally {
    await readers.stop();
  }
  const tallies = readers.tallies;
  problems.push(...readProblems(tallies));
  return [
    row(
      'readers during extracts and compactions (lake)',
      through(tallies),
      problems,
      `${describeReads(tallies)}; over ${extracts} extracts and ${compactions} compactions (${switches} switches) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    ),
  ];
}
