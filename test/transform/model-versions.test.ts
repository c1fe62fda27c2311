/**
 * A model is kept from the previous warehouse when nothing it reads changed (src/transform/incremental/model-versions.ts),
 * and rebuilt with everything downstream when something did: a tiny sandbox over real HTTP, builds of real
 * DuckDB files, each with --verify-incremental (a full build of the same lake compared table for table).
 * The clock is PERKS_NOW.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { closeMonth } from '../../src/close/index.js';
import { buildWarehouse, type BuildOptions, type BuildResult } from '../../src/transform/index.js';
import { formatBuildSummary, formatStep } from '../../src/commands/build.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { StreamName } from '../../pipelines/index.js';
import { orgConfig, testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { atInstant } from '../support/clock.js';
import { ROOT, query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
let sandbox: Sandbox;
let out: string;
const savedNow = process.env.PERKS_NOW;

beforeAll(async () => {
  sandbox = await testSandbox({ today: TODAY });
  out = tempOut('perks-kept-');
});
afterAll(async () => {
  await sandbox.close();
  rmSync(out, { recursive: true, force: true });
  if (savedNow === undefined) delete process.env.PERKS_NOW;
  else process.env.PERKS_NOW = savedNow;
});

/** Extracts `streams` (all by default) at `time` of the sandbox's day. */
async function extractAt(time: string, streams?: StreamName[]): Promise<void> {
  const at = `${TODAY}T${time}Z`;
  process.env.PERKS_NOW = at;
  const r = await atInstant(at, () =>
    extract(orgConfig(sandbox, out, { PERKS_START_DATE: '2026-09-01' }), {
      output: outputAt(out),
      now: new Date(at),
      ...(streams ? { streams } : {}),
    }),
  );
  expect(r.status).toBe('success');
}

/** A build at `time` of the sandbox's day, checked against a full build of the same lake. */
async function buildAt(time: string, options: Partial<BuildOptions> = {}): Promise<BuildResult> {
  const at = `${TODAY}T${time}Z`;
  process.env.PERKS_NOW = at;
  // the program's clock at that instant, whatever instant PERKS_TEST_NOW moved the suite to
  const b = await atInstant(at, () =>
    buildWarehouse({ output: outputAt(out), asOf: TODAY, verifyIncremental: true, ...options }),
  );
  expect(b.error).toBeUndefined();
  expect(b.steps.find((s) => s.name === 'verify incremental')?.status).toBe('success');
  return b;
}

const kept = (b: BuildResult) => b.steps.filter((s) => s.kind === 'model' && s.kept).map((s) => s.name);
/** The data tests of `model` not run again (they passed at the previous build), and those run. */
const tests = (b: BuildResult, model: string) => {
  const of = b.steps.filter((s) => s.kind === 'test' && s.name.startsWith(`${model} · `));
  return { kept: of.filter((s) => s.kept).length, run: of.filter((s) => !s.kept).length };
};
/** The tables built (not kept), and the models built by intervals that rebuilt any, sorted. */
const rebuilt = (b: BuildResult) =>
  b.steps
    .filter((s) => s.kind === 'model' && !s.kept && s.rows !== null && (s.intervals?.rebuilt ?? 1) > 0)
    .map((s) => s.name)
    .sort();

/** Each mart's whole file as `<name> <inode>:<mtime>`: the same only where the file was not written again. */
const wholeFiles = (b: BuildResult) =>
  b.marts
    .filter((m) => m.endsWith('.parquet') && !m.includes('*'))
    .map((m) => {
      const s = statSync(m);
      return `${basename(m)} ${s.ino}:${s.mtimeMs}`;
    })
    .sort();

/**
 * The models that read the instant of the build (as_of_at: credit expiry applied now on the clock's own day;
 * evaluated_at: the stamp of segment changes), and those downstream of them.
 */
const READ_THE_INSTANT = ['credit_adjustments', 'credit_liability_monthly', 'engagement_users', 'int_credit_balances'];
/** Built at every build: the write-back's segment changes, stamped with the instant of the build (evaluated_at). */
const EVERY_BUILD = ['writeback_segment_changes'];
/** A past day: its as-of instant is that day's end, the same at every build. */
const REPLAY = { asOf: '2026-11-21' };
const SEGMENTS = { segments: { newDays: 10, activeDays: 30, dormantDays: 90 } };

test('a rerun keeps every model whose inputs are unchanged; a changed stream, setting, SQL or instant rebuilds what reads it and what follows', async () => {
  await extractAt('12:00:00');
  const first = await buildAt('12:00:00', REPLAY);
  expect(kept(first)).toEqual([]); // no earlier build

  // the same day again, nothing new: every table is kept, and the models built by months rebuild none
  const same = await buildAt('12:10:00', REPLAY);
  const tables = first.steps.filter((s) => s.kind === 'model' && s.rows !== null && !s.intervals).map((s) => s.name);
  expect(kept(same)).toEqual(tables.filter((t) => !EVERY_BUILD.includes(t)));
  expect(rebuilt(same)).toEqual(EVERY_BUILD);
  expect(formatBuildSummary(same)).toContain(`models (${tables.length - 1} kept: nothing they read changed)`);
  expect(formatStep(same.steps.find((s) => s.name === 'dim_groups')!)).toMatch(
    /^ {2}success +\d+\.\d s +\d+ rows {2}dim_groups \(kept: nothing it reads changed\)$/,
  );
  // the ephemeral emails are not computed: no model reading them is rebuilt
  expect(formatStep(same.steps.find((s) => s.name === 'stg_user_emails')!)).toMatch(
    /^ {2}success +\d+\.\d s {20,}stg_user_emails \(not computed: nothing it reads changed; a rebuilt model reading it computes it\)$/,
  );
  // the data tests of what was kept are not run again (they passed at the previous build); of what changed, run
  expect(tests(same, 'dim_groups')).toEqual({ kept: tests(first, 'dim_groups').run, run: 0 });
  expect(tests(same, 'revenue_monthly').run).toBe(0); // its singular tests read stg_orders too: unchanged
  expect(tests(same, 'writeback_segment_changes')).toEqual({
    kept: 0,
    run: tests(first, 'writeback_segment_changes').run,
  });
  const keptTests = same.steps.filter((s) => s.kind === 'test' && s.kept);
  expect(formatBuildSummary(same)).toContain(
    `data tests passed (${keptTests.length} passed at the previous build: nothing they read changed)`,
  );
  expect(formatStep(keptTests[0])).toMatch(
    / {2}success +\d+\.\d s +0 failing {2}.+ \(passed at the previous build: nothing it reads changed\)$/,
  );

  // the marts' whole files are kept as the first build wrote them: not one is written again
  const files = wholeFiles(first);
  expect(files.length).toBe(first.marts.length);
  expect(wholeFiles(same)).toEqual(files);
  expect(same.steps.filter((s) => s.kind === 'export' && s.name.endsWith('.parquet') && !s.kept)).toEqual([]);
  expect(formatBuildSummary(same)).toContain(
    `${same.marts.length} marts exported (${files.length} files kept: the rows they hold are unchanged)`,
  );
  expect(formatStep(same.steps.find((s) => s.name === 'marts/dim_groups.parquet')!)).toMatch(
    /^ {2}success +\d+\.\d s +\d+ rows {2}marts\/dim_groups.parquet \(kept: the rows it holds are unchanged\)$/,
  );
  // a file that is not the one the warehouse's build wrote (replaced, or gone) is written again, whole
  const marts = join(out, 'marts');
  cpSync(join(marts, 'dim_groups.parquet'), join(marts, 'dim_offers.parquet'));
  rmSync(join(marts, 'revenue_monthly.parquet'));
  const mended = await buildAt('12:15:00', REPLAY);
  expect(kept(mended)).toEqual(kept(same));
  const written = mended.steps.filter((s) => s.kind === 'export' && s.name.endsWith('.parquet') && !s.kept);
  expect(written.map((s) => s.name).sort()).toEqual(['marts/dim_offers.parquet', 'marts/revenue_monthly.parquet']);
  const [{ n }] = await query(':memory:', `SELECT count(*)::INTEGER AS n FROM '${join(marts, 'dim_offers.parquet')}'`);
  expect(n).toBe(mended.steps.find((s) => s.name === 'dim_offers')!.rows);

  // a stream landed again: its staging model and what reads it are rebuilt; savings_monthly compares its rows
  // per group-month, so it rebuilds only the months whose statistics changed
  await extractAt('12:20:00', ['redemption_stats']);
  const landed = await buildAt('12:30:00', REPLAY);
  expect(rebuilt(landed)).toContain('stg_redemption_stats');
  // (an extract lands the groups again too: the models of the other streams are what stays)
  expect(kept(landed)).toEqual(expect.arrayContaining(['stg_credit', 'stg_interactions', 'stg_offers', 'dim_offers']));

  // orders landed again (the lookback's days), no users: stg_orders rebuilds those months, computing the
  // emails it reads inside its own query (not stored), and its email lookup is the previous build's (not hashed)
  await extractAt('12:35:00', ['orders']);
  const orders = await buildAt('12:36:00', REPLAY);
  const stgOrders = orders.steps.find((s) => s.name === 'stg_orders')!;
  expect(stgOrders.intervals!.whole).toBeUndefined();
  expect(stgOrders.intervals!.rebuilt).toBeGreaterThan(0);
  expect(orders.steps.find((s) => s.name === 'stg_user_emails')).toMatchObject({ deferred: true, rows: null });

  // a setting one model reads: that model and what follows it
  const segments = await buildAt('12:40:00', { ...REPLAY, ...SEGMENTS });
  expect(rebuilt(segments)).toEqual(['engagement_users', ...EVERY_BUILD]);

  // a model's SQL: that model and what follows it
  const sqlDir = join(mkdtempSync(join(tmpdir(), 'perks-sql-')), 'sql');
  cpSync(join(ROOT, 'sql'), sqlDir, { recursive: true });
  const file = join(sqlDir, 'marts', 'dim_offers.sql');
  writeFileSync(file, `${readFileSync(file, 'utf8').trimEnd()}\n-- a comment is a change of SQL\n`);
  // and models whose rows do not follow from what they read (a setting, the clock, a volatile function in
  // upper case, a file read directly)
  const outside = {
    build_threads: "select current_setting('threads') as threads",
    build_clock: 'select current_date as today',
    build_random: 'select RANDOM() < 2 as drawn',
    build_files: `select count(*) as files from glob('lake/**/*.parquet')`,
  };
  for (const [name, sql] of Object.entries(outside))
    writeFileSync(join(sqlDir, 'marts', `${name}.sql`), `-- grain: one row\n${sql}\n`);
  // and an ephemeral model read by a model that also reads what it reads: computed at every build (a model
  // built by months narrows what it reads to its dirty months while it runs: a view would see only those)
  writeFileSync(
    join(sqlDir, 'marts', 'build_user_ids.sql'),
    '-- grain: one row per user\n-- materialized: ephemeral\nselect user_id from stg_users\n',
  );
  writeFileSync(
    join(sqlDir, 'marts', 'build_user_count.sql'),
    '-- grain: one row\nselect count(*) as n from build_user_ids semi join stg_users using (user_id)\n',
  );
  const changed = await buildAt('12:50:00', { ...REPLAY, ...SEGMENTS, sqlDir });
  expect(rebuilt(changed)).toEqual(
    [...Object.keys(outside), 'build_user_count', 'build_user_ids', 'dim_offers', ...EVERY_BUILD].sort(),
  );
  // again: those are rebuilt at every build, the rest kept
  const again = await buildAt('12:52:00', { ...REPLAY, ...SEGMENTS, sqlDir });
  expect(rebuilt(again)).toEqual([...Object.keys(outside), 'build_user_ids', ...EVERY_BUILD].sort());
  expect(again.steps.find((s) => s.name === 'stg_user_emails')?.deferred).toBe(true);
  rmSync(join(sqlDir, '..'), { recursive: true, force: true });

  // a month signed off: the models that read the close record are rebuilt, the others kept
  process.env.PERKS_NOW = `${TODAY}T12:55:00Z`;
  const group = sandbox.world.groups[0].id;
  await atInstant(`${TODAY}T12:55:00Z`, () =>
    closeMonth({
      output: outputAt(out),
      month: '2026-10',
      group,
      by: 'test',
      force: true,
      rule: { statuses: ['Complete'] },
    }),
  );
  const closed = await buildAt('12:56:00', { ...REPLAY, ...SEGMENTS });
  expect(rebuilt(closed)).toEqual(expect.arrayContaining(['dim_offers', 'revenue_monthly', 'revenue_adjustments']));
  expect(kept(closed)).toEqual(expect.arrayContaining(['stg_offers', 'dim_groups']));

  // today, twice: the second build rebuilds the models that read the instant, which has moved on
  await buildAt('13:00:00');
  const later = await buildAt('14:00:00');
  expect(rebuilt(later)).toEqual([...READ_THE_INSTANT, ...EVERY_BUILD].sort());

  // --full keeps nothing, and writes every file again
  const before = wholeFiles(later);
  const full = await buildAt('14:10:00', { full: true });
  expect(kept(full)).toEqual([]);
  expect(full.steps.filter((s) => s.kept)).toEqual([]);
  const after = wholeFiles(full);
  expect(after.filter((f, i) => f === before[i])).toEqual([]);
}, 300_000);
