/**
 * 1 and 2. Crash anywhere: `perks extract` children killed with SIGKILL at random moments and at each
 * named commit point (PERKS_CRASH_AT, src/shared/crash-points.ts), each followed by a rerun to
 * completion; the lake is then compared with the sandbox's truth and with an uninterrupted run.
 * Meanwhile reader loops read the lake (readers.ts) and check that every window they see is whole.
 */
import { cpSync } from 'node:fs';
import { extract, shiftDay } from '../../../src/extract/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { EXTRACT_CRASH_POINTS, CRASH_ENV, type ExtractCrashPoint } from '../../../src/shared/crash-points.js';
import { startCli } from '../../support/cli.js';
import { completeness, lakeKeys, leftovers, type GroupDays, type Keys } from '../../support/lake-check.js';
import { seeded, sleep } from '../../support/random.js';
import { orgConfig, orgEnv, testSandbox } from '../../support/sandbox.js';
import { withScratch, type Scratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { describeReads, readProblems, startReaders } from './readers.js';
import { todayUtc } from '../../../src/shared/clock.js';
import { atInstant } from '../../support/clock.js';
import { outputAt } from '../../../src/output/index.js';

export interface CrashOptions extends ScenarioOptions {
  kills: number;
  points?: readonly ExtractCrashPoint[];
  /** Local days extracted (the sandbox's today minus this many days, up to yesterday). */
  days?: number;
}

/** Where each named point is killed: its n-th pass, so the run has committed something before. */
const NTH: Record<ExtractCrashPoint, number> = {
  'after-page': 40,
  'mid-parquet': 25,
  'before-rename': 25,
  'after-rename': 25,
  'after-state': 25,
  'before-unlock': 1,
};

interface Tally {
  missing: number;
  wrong: number;
  duplicated: number;
  leftovers: number;
  manual: number;
  problems: string[];
}

const emptyTally = (): Tally => ({ missing: 0, wrong: 0, duplicated: 0, leftovers: 0, manual: 0, problems: [] });

export async function crashScenario(o: CrashOptions): Promise<Row[]> {
  const sandbox = await testSandbox({ seed: o.seed % 1000 });
  try {
    return await withScratch('crash', (scratch) => run(sandbox, scratch, o));
  } finally {
    await sandbox.close();
  }
}

async function run(sandbox: Sandbox, scratch: Scratch, o: CrashOptions): Promise<Row[]> {
  const random = seeded(o.seed);
  const start = shiftDay(todayUtc(), -(o.days ?? 30));
  const env = (out: string, extra: Record<string, string> = {}) =>
    orgEnv(sandbox, out, { PERKS_START_DATE: start, ...extra });

  // An uninterrupted run: the reference for every stream, and how long a run takes.
  const reference = scratch.dir('reference');
  const ref = startCli(['extract'], env(reference));
  await ref.saw('"event":"run"');
  const began = performance.now();
  const refResult = await ref.done;
  const span = performance.now() - began;
  if (refResult.code !== 0)
    return [row('crash: reference run', 1, [`exit ${refResult.code}: ${refResult.stderr.slice(-300)}`], 'failed')];
  const refKeys = await lakeKeys(reference);

  const dirs: string[] = [];
  // Readers beside the kills, not flat out (the readers scenario is that): the runs keep their pace.
  const readers = startReaders(sandbox, start, () => dirs, { pauseMs: 100 });
  const rows: Row[] = [];
  try {
    rows.push(await randomKills(o, scratch, random, span, env, dirs, sandbox, start, refKeys));
    if (o.points?.length) rows.push(await namedPoints(o, scratch, reference, env, dirs, sandbox, start, refKeys));
  } finally {
    const reads = await readers.stop();
    rows.push(
      row(
        'readers during writes (lake)',
        reads.duckdb.reads + reads.hyparquet.reads,
        readProblems(reads),
        describeReads(reads),
      ),
    );
  }
  o.log(`crash: a run takes ${span} ms after its start-up`);
  return rows;
}

type EnvOf = (out: string, extra?: Record<string, string>) => Record<string, string>;

async function randomKills(
  o: CrashOptions,
  scratch: Scratch,
  random: () => number,
  span: number,
  env: EnvOf,
  dirs: string[],
  sandbox: Sandbox,
  start: string,
  refKeys: Keys,
): Promise<Row> {
  const t = emptyTally();
  let out = '';
  let killedMidRun = 0;
  for (let i = 0; i < o.kills; i++) {
    // A fresh lake every third time; otherwise a full refresh over the lake of the run before.
    const fresh = i % 3 === 0;
    if (fresh) dirs.push((out = scratch.dir(`kill${i}`)));
    const child = startCli(fresh ? ['extract'] : ['extract', '--full-refresh'], env(out));
    await child.saw('"event":"run"');
    const delay = Math.floor(random() * span);
    await sleep(delay);
    child.child.kill('SIGKILL');
    const killed = await child.done;
    if (killed.signal === 'SIGKILL') killedMidRun += 1;
    o.log(`crash: kill ${i + 1}/${o.kills} after ${delay} ms (${killed.signal ?? `exit ${killed.code}`})`);
    await rerunAndCheck(sandbox, out, start, refKeys, t, `kill ${i + 1}`);
  }
  return row(
    'crash: SIGKILL at random moments',
    o.kills,
    t.problems,
    `missing ${t.missing}, duplicated ${t.duplicated}, wrong ${t.wrong}, manual fixes ${t.manual}, temp files left ${t.leftovers} (${killedMidRun} killed mid-run)`,
  );
}

async function namedPoints(
  o: CrashOptions,
  scratch: Scratch,
  reference: string,
  env: EnvOf,
  dirs: string[],
  sandbox: Sandbox,
  start: string,
  refKeys: Keys,
): Promise<Row> {
  const t = emptyTally();
  let reached = 0;
  let midWrite = 0;
  for (const point of o.points ?? EXTRACT_CRASH_POINTS) {
    // Over a copy of a whole lake, so the crash interrupts the replacement of committed files.
    const out = scratch.dir(point);
    cpSync(reference, out, { recursive: true });
    dirs.push(out);
    const child = startCli(['extract', '--full-refresh'], env(out, { [CRASH_ENV]: `${point}:${NTH[point]}` }));
    const killed = await child.done;
    if (killed.signal === 'SIGKILL') reached += 1;
    else t.problems.push(`${point}: not reached (exit ${killed.code})`);
    if (point === 'mid-parquet' && leftovers(out).some((f) => f.includes('.parquet.perks-tmp'))) midWrite += 1;
    o.log(`crash: point ${point} (${killed.signal ?? `exit ${killed.code}`})`);
    await rerunAndCheck(sandbox, out, start, refKeys, t, point);
  }
  const n = (o.points ?? EXTRACT_CRASH_POINTS).length;
  if ((o.points ?? EXTRACT_CRASH_POINTS).includes('mid-parquet') && midWrite === 0)
    t.problems.push('mid-parquet: no unfinished Parquet file seen after the kill');
  return row(
    'crash: named commit points',
    n,
    t.problems,
    `${reached}/${n} points reached, recovered: missing ${t.missing}, duplicated ${t.duplicated}, manual fixes ${t.manual}, temp files left ${t.leftovers}`,
  );
}

/** The rerun a scheduler would make, then every check. */
async function rerunAndCheck(
  sandbox: Sandbox,
  out: string,
  start: string,
  refKeys: Keys,
  t: Tally,
  label: string,
): Promise<void> {
  let groups: GroupDays[];
  try {
    // on the instant the CLI children run at (orgEnv's PERKS_NOW: the sandbox's day at noon UTC), or the
    // groups' last whole local days differ from the reference's (at 00:30 UTC New York's is a day behind); the
    // same instant as the killed run's start: its stamp must still come after it (src/lake/run-stamps.ts)
    const result = await atInstant(`${sandbox.world.today}T12:00:00Z`, () =>
      extract(orgConfig(sandbox, out, { PERKS_START_DATE: start }), { output: outputAt(out) }),
    );
    if (result.exitCode !== 0)
      throw new Error(`exit ${result.exitCode}: ${result.streams.find((s) => s.error)?.error ?? ''}`);
    groups = result.groups;
  } catch (err) {
    t.manual += 1;
    t.problems.push(`${label}: the rerun failed: ${(err as Error).message}`);
    return;
  }
  const c = await completeness(sandbox, out, groups, start, refKeys);
  t.missing += c.missing;
  t.wrong += c.wrong;
  t.duplicated += c.duplicated;
  t.leftovers += c.leftovers.length;
  if (c.problem) t.problems.push(`${label}: ${c.problem}`);
}
