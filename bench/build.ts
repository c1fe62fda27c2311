/**
 * Benchmark of `perks build`: a generated lake of 10,000,000 orders and 1,000,000 users (written by DuckDB
 * straight to Hive-partitioned Parquet, following docs/dev/lake-contract.md), then the full build timed
 * against a plain DuckDB scan of the same Parquet, and the peak RSS of the build.
 *
 *   node bin/run-ts.mjs bench/build.ts [--orders N] [--users N] [--snapshot-days N] [--day-folders] [--large] [--lake DIR] [--regenerate] [--no-incremental]
 *
 * The lake is cached under /tmp between runs (generation takes a while on 2 cores).
 * Then (unless --no-incremental) the incremental builds of issue 27 on a copy: the next day, the day after, the
 * weekly deep re-read, each one's CPU seconds as a ratio of the full build's, and their tables compared with a full build's.
 * Goals: full build ≤ 30 s and peak RSS ≤ 2 GB; next day ≤ 10% and deep re-read ≤ 25% of the full build's
 * CPU seconds, marts identical. --large: 100 M orders and 10 M users, peak RSS ≤ 8 GB, next day ≤ 60 s.
 * The ratio to a plain scan is printed for reference, no longer judged (the retired goal of ≤ 5).
 */
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg, tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { DuckDBInstance, quotedIdentifier } from '@duckdb/node-api';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
/** --large: the issue's 100 M orders and 10 M users (a long run: generation and builds take many minutes). */
const LARGE = args.includes('--large');
const ORDERS = Number(flag('orders') ?? (LARGE ? 100_000_000 : 10_000_000));
const USERS = Number(flag('users') ?? (LARGE ? 10_000_000 : 1_000_000));
/**
 * --snapshot-days N: the users snapshots the lake holds (the same users listed on N days ending the day before
 * AS_OF); the retention keeps 14 daily and one per earlier month, so a lake of two years holds about 38.
 */
const SNAPSHOT_DAYS = Number(flag('snapshot-days') ?? 1);
/**
 * The lake as `perks compact` leaves it (month folders, closed months one file each, the open month's days up
 * to the lookback in one file): extract and run compact after every run, so every production lake has this
 * layout from its first run on. The next days land day files and merge into month files as the extract does
 * (lake-days.ts). --day-folders: the generator's day folders instead (the layout before month folders, what
 * the bench measured until stop 37).
 */
const COMPACTED = !args.includes('--day-folders');
/**
 * Issue 27: the next day's incremental build ≤ 10% of the full build's CPU seconds, the weekly deep re-read
 * (two months dirty) ≤ 25%, the marts identical to a full build's; at 100 M orders the full build's peak RSS
 * ≤ 8 GB and the next day's build ≤ 60 s.
 */
const GOALS = LARGE
  ? { buildSeconds: Infinity, peakRssMb: 8192, nextDayRatio: 0.1, deepRatio: 0.25, nextDaySeconds: 60 }
  : { buildSeconds: 30, peakRssMb: 2048, nextDayRatio: 0.1, deepRatio: 0.25, nextDaySeconds: Infinity };
import { AS_OF, GROUPS, generateLake, isGenerated } from './lake-generator.js';
import { deepReread, isMonthLayout, nextDay } from './lake-days.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { outputAt } from '../src/output/index.js';

/**
 * Plain DuckDB scans of the same Parquet, each the best of two: `lake` reads every column of every file
 * of the lake (what the build reads, once); `orders` every column the build reads from orders; `sum` one
 * column of orders. The goal's ratio is to `lake`; the others say how far a narrower reading is.
 */
async function plainScans(outDir: string): Promise<{ sum: number; orders: number; lake: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const source = (stream: string) =>
    `read_parquet('${join(outDir, 'lake', stream)}/**/*.parquet', hive_partitioning = true, union_by_name = true)`;
  const time = async (sql: string) => {
    let best = Infinity;
    for (let i = 0; i < 2; i++) {
      const t = Date.now();
      await c.run(sql);
      best = Math.min(best, Date.now() - t);
    }
    return best;
  };
  const sum = await time(`SELECT sum(face_value) FROM ${source('orders')}`);
  const orders = await time(
    `SELECT count(*), sum(face_value), sum(order_total_paid), sum(order_credit), sum(order_saving), sum(group_revenue),
            count(order_status), count(brand), count(order_currency), count(lower(email)), max(order_id), max(perk_id),
            min(order_date), max(organisation_group_id), max(_extracted_at), max(_run_id)
     FROM ${source('orders')}`,
  );
  let lake = 0;
  for (const stream of readdirSync(join(outDir, 'lake')).filter((s) => !s.startsWith('_') && !s.startsWith('.'))) {
    const described = await c.runAndReadAll(`DESCRIBE SELECT * FROM ${source(stream)}`);
    const columns = (described.getRowObjectsJson() as { column_name: string }[]).map(
      (r) => `min(${quotedIdentifier(r.column_name)})`,
    );
    lake += await time(`SELECT count(*), ${columns.join(', ')} FROM ${source(stream)}`);
  }
  c.closeSync();
  db.closeSync();
  return { sum, orders, lake };
}

interface StepFigure {
  name: string;
  kind: string;
  /** The model a step belongs to: the model itself, its data tests, its export. */
  model: string;
  ms: number;
  cpuMs: number;
  rows: number | null;
  intervals?: { rebuilt: number; skipped: number; whole?: string };
  /** A month folder's export: month files written, kept, removed. */
  monthFiles?: { written: number; kept: number; removed: number };
  /** A model kept from the previous warehouse: nothing it reads changed. */
  kept?: boolean;
}

/**
 * "savings_monthly · unique(…)", "marts/savings_monthly.parquet" and its month folder "marts/savings_monthly/"
 * belong to savings_monthly.
 */
const modelOf = (step: string): string => step.replace(/^marts\/([^/]*?)(\.parquet|\/)$/, '$1').split(' · ')[0];

/** Per model: its own step, then its data tests and its export summed, wall and CPU seconds. */
function printSteps(steps: StepFigure[]): void {
  const s = (ms: number) => (ms / 1000).toFixed(2).padStart(6);
  const rows: string[] = [
    `  ${'step'.padEnd(28)} ${'wall s'.padStart(6)} ${'CPU s'.padStart(6)}  ${'tests s'.padStart(7)} ${'CPU s'.padStart(6)}  ${'export s'.padStart(8)} ${'CPU s'.padStart(6)}  ${'rows'.padStart(11)}`,
  ];
  for (const own of steps.filter((x) => x.kind !== 'test' && x.kind !== 'export')) {
    const tests = steps.filter((x) => x.kind === 'test' && x.model === own.name);
    const exported = steps.filter((x) => x.kind === 'export' && x.model === own.name);
    const sum = (list: StepFigure[], key: 'ms' | 'cpuMs') => list.reduce((n, x) => n + x[key], 0);
    rows.push(
      `  ${own.name.padEnd(28)} ${s(own.ms)} ${s(own.cpuMs)}  ${tests.length ? `${s(sum(tests, 'ms')).padStart(7)} ${s(sum(tests, 'cpuMs'))}` : ' '.repeat(14)}  ` +
        `${exported.length ? `${s(sum(exported, 'ms')).padStart(8)} ${s(sum(exported, 'cpuMs'))}` : ' '.repeat(15)}  ${(own.rows ?? '').toLocaleString().padStart(11)}`,
    );
  }
  const orphans = steps.filter(
    (x) =>
      (x.kind === 'test' || x.kind === 'export') &&
      !steps.some((o) => o.kind !== 'test' && o.kind !== 'export' && o.name === x.model),
  );
  for (const o of orphans) rows.push(`  ${o.name.slice(0, 60).padEnd(28)} ${s(o.ms)} ${s(o.cpuMs)}`);
  console.log(rows.join('\n'));
}

/**
 * February 2026 signed off for every group (the close record, hash chained) before the current extract:
 * the refunds that extract saw become revenue_adjustments (about 5% of February's orders).
 */
async function writeBenchCloses(outDir: string): Promise<void> {
  const { hashOf, canonicalJson } = await import('../src/closes/index.js');
  const lines: string[] = [];
  let prev = '';
  for (const [i, g] of GROUPS.entries()) {
    const body = {
      seq: i + 1,
      action: 'close' as const,
      organisation_group_id: g.id,
      month: '2026-02',
      at: '2026-03-31T12:00:00.000Z',
      by: 'bench',
      note: '',
      forced: false,
      figures: {
        revenue_statuses: ['Complete'],
        reread: null,
        section: { groupId: g.id, name: `Group ${g.id}`, timezone: g.tz, currencies: [] },
        reconciliation: { available: true, lines: [] },
      },
      prev_hash: prev,
    };
    const record = { ...body, hash: hashOf(body) };
    lines.push(canonicalJson(record));
    prev = record.hash;
  }
  mkdirSync(join(outDir, 'closes'), { recursive: true });
  writeFileSync(join(outDir, 'closes', 'closes.jsonl'), `${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  const outDir =
    flag('lake') ??
    join(
      tmpdir(),
      `perks-bench-lake-${ORDERS}-${USERS}${SNAPSHOT_DAYS > 1 ? `-s${SNAPSHOT_DAYS}` : ''}${COMPACTED ? '-c' : ''}`,
    );
  if (args.includes('--child')) {
    // The build alone, in its own process, so its peak RSS is its own.
    const { buildWarehouse } = await import('../src/transform/index.js');
    const { outputAt } = await import('../src/output/index.js');
    const t = Date.now();
    const cpu = process.cpuUsage();
    // One step runs at a time, so the process's CPU between two step ends is that step's.
    let lastCpu = cpu;
    const steps: StepFigure[] = [];
    const result = await buildWarehouse(
      { output: outputAt(outDir), asOf: flag('as-of') ?? AS_OF, full: args.includes('--full') },
      {
        onStep: (step) => {
          const now = process.cpuUsage();
          steps.push({
            name: step.name,
            kind: step.kind,
            model: modelOf(step.name),
            ms: step.ms,
            cpuMs: (now.user + now.system - lastCpu.user - lastCpu.system) / 1000,
            rows: step.rows,
            ...(step.intervals ? { intervals: step.intervals } : {}),
            ...(step.monthFiles ? { monthFiles: step.monthFiles } : {}),
            ...(step.kept ? { kept: true } : {}),
          });
          lastCpu = now;
        },
      },
    );
    const ms = Date.now() - t;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    process.stdout.write(
      `${JSON.stringify({ ms, cpuMs, ok: result.ok, error: result.error, steps, rss: process.resourceUsage().maxRSS * 1024 })}\n`,
    );
    return;
  }
  if (args.includes('--regenerate') || !isGenerated(outDir, ORDERS, USERS, SNAPSHOT_DAYS)) {
    console.log(
      `generating ${ORDERS.toLocaleString()} orders and ${USERS.toLocaleString()} users (${SNAPSHOT_DAYS} snapshots) into ${outDir}`,
    );
    const t = Date.now();
    rmSync(join(outDir, 'compacted.ok'), { force: true });
    await generateLake(outDir, ORDERS, USERS, SNAPSHOT_DAYS);
    console.log(`lake generated in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  // written once the compaction is done: one killed halfway is finished by the next bench run
  const compacted = join(outDir, 'compacted.ok');
  if (COMPACTED && !existsSync(compacted)) {
    const { compactLake } = await import('../src/compact/index.js');
    const t = Date.now();
    // as a compaction on AS_OF's morning would, with the default lookback
    await compactLake(outputAt(outDir), {
      lookbackDays: DEFAULTS.lookbackDays,
      now: new Date(`${AS_OF}T06:00:00Z`),
      lock: false,
    });
    writeFileSync(compacted, '');
    console.log(`lake compacted in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  await writeBenchCloses(outDir);
  if (args.includes('--generate-only')) return;
  const scans = await plainScans(outDir);
  // the full build, in the lake's own folder (--full: the cached folder holds an earlier run's warehouse)
  const build = childBuild(outDir, ['--full']);
  printSteps(build.steps);
  const report = {
    orders: ORDERS,
    users: USERS,
    build_s: +(build.ms / 1000).toFixed(2),
    // CPU seconds of the build (all DuckDB threads): on a shared machine, wall time depends on the neighbours
    build_cpu_s: +(build.cpuMs / 1000).toFixed(1),
    load_avg_1m: +loadavg()[0].toFixed(2),
    // how the marts built by months are exported (PERKS_MART_LAYOUT): `months` rewrites only changed months
    mart_layout: process.env.PERKS_MART_LAYOUT ?? 'both (default)',
    // the lake's orders and history: month folders as compaction leaves them, or the generator's day folders
    lake_layout: isMonthLayout(outDir) ? 'months (compacted)' : 'days (as generated)',
    // DuckDB's memory limit of every build (PERKS_BUILD_MEMORY_LIMIT): at 100 M orders it decides the spills
    memory_limit: process.env.PERKS_BUILD_MEMORY_LIMIT ?? `${DEFAULTS.build.memoryLimit} (default)`,
    scan_lake_s: +(scans.lake / 1000).toFixed(2),
    scan_orders_s: +(scans.orders / 1000).toFixed(2),
    scan_sum_s: +(scans.sum / 1000).toFixed(2),
    ratio_to_lake_scan: +(build.ms / scans.lake).toFixed(1),
    ratio_to_orders_scan: +(build.ms / scans.orders).toFixed(1),
    ratio_to_sum_scan: +(build.ms / scans.sum).toFixed(1),
    peak_rss_mb: Math.round(build.rss / 1024 / 1024),
    goals: GOALS,
    built: build.ok,
  };
  // As in the other parts: ok means every goal met (and the build succeeded).
  const inc = args.includes('--no-incremental') ? null : await incrementalDays(outDir, build);
  // As in the other parts: ok means every goal met (and the builds succeeded).
  const ok =
    build.ok &&
    report.build_s <= GOALS.buildSeconds &&
    report.peak_rss_mb <= GOALS.peakRssMb &&
    (inc === null ||
      (inc.next_day_ok &&
        inc.next_day_2_ok &&
        inc.deep_ok &&
        inc.rerun_ok &&
        inc.marts_identical &&
        Math.max(inc.next_day_cpu_ratio, inc.next_day_2_cpu_ratio) <= GOALS.nextDayRatio &&
        inc.deep_cpu_ratio <= GOALS.deepRatio &&
        Math.max(inc.next_day_s, inc.next_day_2_s) <= GOALS.nextDaySeconds));
  console.log(JSON.stringify({ ...report, ...(inc ?? {}), ok }));
  if (inc)
    console.log(
      `incremental: next day ${inc.next_day_s} s, ${inc.next_day_cpu_s} CPU-s, ratio ${inc.next_day_cpu_ratio} (goal ≤ ${GOALS.nextDayRatio}); ` +
        `second next day ${inc.next_day_2_s} s, ${inc.next_day_2_cpu_s} CPU-s, ratio ${inc.next_day_2_cpu_ratio} (goal ≤ ${GOALS.nextDayRatio}); ` +
        `deep re-read ${inc.deep_s} s, ${inc.deep_cpu_s} CPU-s, ratio ${inc.deep_cpu_ratio} (goal ≤ ${GOALS.deepRatio}); ` +
        `rerun with nothing new ${inc.rerun_s} s, ${inc.rerun_cpu_s} CPU-s, ratio ${inc.rerun_cpu_ratio}; models kept: ${inc.kept}; ` +
        `marts identical to a full build: ${inc.marts_identical}${inc.difference ? ` (${inc.difference})` : ''}; ${inc.intervals}`,
    );
  console.log(
    `build ${report.build_s} s wall, ${report.build_cpu_s} CPU-s (goal ≤ ${GOALS.buildSeconds} s) · scan of the whole lake ${report.scan_lake_s} s · ` +
      `ratio ${report.ratio_to_lake_scan} (not judged; ${report.ratio_to_orders_scan} to the orders columns it reads, ${report.ratio_to_sum_scan} to one column) · ` +
      `peak RSS ${report.peak_rss_mb} MB (goal ≤ ${GOALS.peakRssMb}) · load ${report.load_avg_1m}` +
      (build.ok ? '' : ` · BUILD FAILED: ${build.error}`),
  );
  if (!build.ok) process.exitCode = 1;
}

interface ChildBuild {
  ms: number;
  cpuMs: number;
  ok: boolean;
  error?: string;
  rss: number;
  steps: (StepFigure & { intervals?: { rebuilt: number; skipped: number; whole?: string } })[];
}

/** One build of `dir`'s lake in a process of its own (its CPU and peak RSS its own). */
function childBuild(dir: string, extra: string[] = []): ChildBuild {
  const self = fileURLToPath(import.meta.url);
  const runTs = resolve(dirname(self), '..', 'bin', 'run-ts.mjs');
  // the child reads the first --lake: this one, not the parent's
  const child = spawnSync(process.execPath, [runTs, self, '--lake', dir, ...args, ...extra, '--child'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
    // one instant for every build: the rows a build stamps (write-back's evaluated_at) compare equal
    env: { ...process.env, PERKS_NOW: `${AS_OF}T06:00:00Z` },
  });
  return JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as ChildBuild;
}

/**
 * The incremental builds, in a copy of the lake and its full build's warehouse (the cached lake stays as
 * generated): the next day's run, then the weekly deep re-read, then the same build again with nothing new;
 * each build's CPU seconds over the full build's; then a full build of the same lake and its tables compared with the incremental one's.
 */
async function incrementalDays(outDir: string, full: ChildBuild) {
  const dir = `${outDir}-incremental`;
  rmSync(dir, { recursive: true, force: true });
  cpSync(outDir, dir, { recursive: true });
  try {
    const asOf = (n: number) => new Date(Date.parse(AS_OF) + n * 86_400_000).toISOString().slice(0, 10);
    await nextDay(dir, 1);
    const next = childBuild(dir, ['--as-of', asOf(1)]);
    console.log('next day, incremental:');
    printSteps(next.steps);
    // the day after: what every later day costs (the first one after a full build also indexes what it reads)
    await nextDay(dir, 2);
    const next2 = childBuild(dir, ['--as-of', asOf(2)]);
    console.log('second next day, incremental:');
    printSteps(next2.steps);
    const nextAsOf = asOf(3);
    await deepReread(dir, 3);
    const deep = childBuild(dir, ['--as-of', nextAsOf]);
    console.log('deep re-read, incremental:');
    printSteps(deep.steps);
    // the scheduled refresh run again with nothing new: what "safe to rerun" costs
    const rerun = childBuild(dir, ['--as-of', nextAsOf]);
    console.log('rerun, nothing new:');
    printSteps(rerun.steps);
    const { compareWarehouses, describeDifference } = await import('../src/transform/index.js');
    // moved, not copied: the full build below starts from nothing (at 100 M orders a copy is 12 GB more disk)
    const incremental = join(dir, 'warehouse.incremental.duckdb');
    renameSync(join(dir, 'warehouse.duckdb'), incremental);
    const check = childBuild(dir, ['--as-of', nextAsOf, '--full']);
    const differences = check.ok
      ? await compareWarehouses(incremental, join(dir, 'warehouse.duckdb'), {
          memoryLimit: '4GB',
          spillDirectory: join(dir, 'compare.spill'),
        })
      : [];
    // every model built by intervals: `stg_orders 8/44` (months rebuilt / skipped), or why it was built whole
    const intervals = (b: ChildBuild, name: string) =>
      `${name}: ` +
      b.steps
        .flatMap(({ name: model, intervals: i }) =>
          i ? [`${model} ${i.rebuilt}/${i.skipped}${i.whole ? ` (whole: ${i.whole})` : ''}`] : [],
        )
        .join(', ') +
      ' (months rebuilt/skipped)' +
      b.steps
        .flatMap(({ name: folder, monthFiles: f }) => (f ? [`, ${folder} ${f.written}/${f.kept}/${f.removed}`] : []))
        .join('') +
      (b.steps.some((st) => st.monthFiles) ? ' (month files written/kept/removed)' : '');
    const kept = (b: ChildBuild) =>
      `${b.steps.filter((st) => st.kept && st.kind === 'model').length} models + ` +
      `${b.steps.filter((st) => st.kept && st.kind === 'test').length} tests + ` +
      `${b.steps.filter((st) => st.kept && st.kind === 'export').length} files`;
    return {
      next_day_ok: next.ok,
      next_day_s: +(next.ms / 1000).toFixed(2),
      next_day_cpu_s: +(next.cpuMs / 1000).toFixed(1),
      next_day_cpu_ratio: +(next.cpuMs / full.cpuMs).toFixed(3),
      next_day_peak_rss_mb: Math.round(next.rss / 1024 / 1024),
      next_day_2_ok: next2.ok,
      next_day_2_s: +(next2.ms / 1000).toFixed(2),
      next_day_2_cpu_s: +(next2.cpuMs / 1000).toFixed(1),
      next_day_2_cpu_ratio: +(next2.cpuMs / full.cpuMs).toFixed(3),
      deep_ok: deep.ok,
      deep_s: +(deep.ms / 1000).toFixed(2),
      deep_cpu_s: +(deep.cpuMs / 1000).toFixed(1),
      deep_cpu_ratio: +(deep.cpuMs / full.cpuMs).toFixed(3),
      rerun_ok: rerun.ok,
      rerun_s: +(rerun.ms / 1000).toFixed(2),
      rerun_cpu_s: +(rerun.cpuMs / 1000).toFixed(1),
      rerun_cpu_ratio: +(rerun.cpuMs / full.cpuMs).toFixed(3),
      // models kept from the previous warehouse, data tests not run again (nothing they read changed), whole files kept
      kept: `next day ${kept(next)}, second next day ${kept(next2)}, deep re-read ${kept(deep)}, rerun ${kept(rerun)}`,
      marts_identical: check.ok && differences.length === 0,
      difference: check.ok ? (differences[0] ? describeDifference(differences[0]) : undefined) : check.error,
      intervals: `${intervals(next, 'next day')}; ${intervals(next2, 'second next day')}; ${intervals(deep, 'deep re-read')}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
