/**
 * The output in object storage (issue 24), against s3rver and Redis started here:
 * - crash: a publish killed (SIGKILL) at each of its named points, and a close killed before and after
 *   its record is committed, then the next command on another machine: nothing half-visible (every key
 *   the index names exists, no intent or garbage left, no object outside it), nothing lost, nothing
 *   duplicated (the lake equals a run never killed; one close record);
 * - readers: a reader following `lake/orders/_current.json` in a loop while runs compact October and
 *   publish never counts an order twice (a file gone under it is read again, as documented).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { withLakeConnection } from '../../../src/lake/index.js';
import { CLOSE_CRASH_POINTS, STORE_CRASH_POINTS } from '../../../src/shared/crash-points.js';
import { streamRows } from '../../support/lake-check.js';
import { s3Client } from '../../support/s3.js';
import { testSandbox } from '../../support/sandbox.js';
import { messages, startStoreWorld, type StoreWorld } from '../../support/store-world.js';
import { extractKilledAt, STORE_STREAMS } from '../../support/killed-extract.js';
import { runCli } from '../../support/cli.js';
import { orgEnv } from '../../support/sandbox.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const STREAMS = ['orders', 'order_versions', 'users', 'redemption_stats', 'credit', 'interactions'];

async function consistent(world: StoreWorld, prefix: string): Promise<string[]> {
  const problems: string[] = [];
  const index = await world.index(prefix);
  const objects = await world.objects(prefix);
  if (!index) return ['no index'];
  const named = new Set(Object.values(index.files).map((e) => e.key));
  for (const key of named) if (!objects.has(key)) problems.push(`${prefix}: the index names ${key}, which is missing`);
  // the index lists the last publish's garbage until the next commit: none of it may be left
  const left = index.garbage.filter((k) => objects.has(k));
  if (left.length) problems.push(`${prefix}: garbage left: ${left.length}`);
  if (objects.has('_perks/intent.json')) problems.push(`${prefix}: an intent left`);
  // a view the index names at its staged key (the last publish's) is also under its own name, the same bytes
  for (const [path, e] of Object.entries(index.files))
    if (
      e.key !== path &&
      /^(marts|reports|docs)\//.test(path) &&
      !objects.get(path)?.equals(objects.get(e.key) ?? Buffer.alloc(0))
    )
      problems.push(`${prefix}: the view ${path} by name is not the one the index names (${e.key})`);
  const byName = new Set(Object.keys(index.files).filter((p) => /^(marts|reports|docs)\//.test(p)));
  const stray = [...objects.keys()].filter(
    (k) =>
      !named.has(k) &&
      !byName.has(k) &&
      (!k.startsWith('_perks/') || k.startsWith('_perks/views/')) &&
      !k.endsWith('/_current.json') &&
      !k.startsWith('lake/_symlink/'),
  );
  if (stray.length) problems.push(`${prefix}: objects outside the index: ${stray.slice(0, 3).join(', ')}`);
  return problems;
}

export async function storeCrashScenario(o: ScenarioOptions): Promise<Row[]> {
  const world = await startStoreWorld();
  const sandboxes = [await testSandbox({ seed: 24 })];
  try {
    const problems: string[] = [];
    const reference = world.machine();
    const ref = await world.perks(['run', '--no-writeback'], world.env(sandboxes[0], 'reference', reference));
    if (ref.code !== 0) problems.push(`reference run: exit ${ref.code}`);
    let kills = 0;
    for (const point of STORE_CRASH_POINTS) {
      o.log(`store crash at ${point}`);
      const prefix = `crash-${point}`;
      // store-mid-garbage needs something replaced: a first run, then the killed one re-reads the lookback
      if (point === 'store-mid-garbage')
        await world.perks(['run', '--no-writeback'], world.env(sandboxes[0], prefix, world.machine()));
      const killed = await world.perks(
        ['run', '--no-writeback'],
        world.env(sandboxes[0], prefix, world.machine(), { PERKS_CRASH_AT: point }),
      );
      if (killed.signal !== 'SIGKILL') problems.push(`${point}: not killed (exit ${killed.code})`);
      else kills++;
      const next = world.machine();
      const rerun = await world.perks(['run', '--no-writeback'], world.env(sandboxes[0], prefix, next));
      if (rerun.code !== 0) problems.push(`${point}: the rerun exited ${rerun.code}: ${rerun.stderr.slice(-300)}`);
      problems.push(...(await consistent(world, prefix)));
      for (const s of STREAMS)
        if (JSON.stringify(await streamRows(next, s)) !== JSON.stringify(await streamRows(reference, s)))
          problems.push(`${point}: ${s} differs from a run never killed`);
    }
    for (const [i, point] of CLOSE_CRASH_POINTS.entries()) {
      o.log(`close crash at ${point}`);
      const group = String(11 + i); // a group of its own per point
      const env = world.env(sandboxes[0], 'reference', world.machine(), { PERKS_CRASH_AT: point });
      const killed = await world.perks(['close', '--month', '2026-10', '--group', group, '--no-reread'], env);
      if (killed.signal !== 'SIGKILL') problems.push(`${point}: not killed (exit ${killed.code})`);
      else kills++;
      const again = await world.perks(
        ['close', '--month', '2026-10', '--group', group, '--no-reread'],
        world.env(sandboxes[0], 'reference', world.machine()),
      );
      const want = point === 'close-before-publish' ? 0 : 2; // committed before the kill: already closed
      if (again.code !== want) problems.push(`${point}: the close again exited ${again.code}, expected ${want}`);
      const list = await world.perks(
        ['closes', '--format', 'json'],
        world.env(sandboxes[0], 'reference', world.machine()),
      );
      const records = (JSON.parse(list.stdout || '[]') as { month: string; organisation_group_id: number }[]).filter(
        (r) => r.month === '2026-10' && r.organisation_group_id === Number(group),
      );
      if (records.length !== 1)
        problems.push(`${point}: ${records.length} close records of 2026-10 for group ${group}`);
    }
    problems.push(...(await consistent(world, 'reference')));
    return [
      row(
        'store-crash',
        kills,
        problems,
        `${kills} kills at ${STORE_CRASH_POINTS.length} publish and ${CLOSE_CRASH_POINTS.length} close points; nothing half-visible, lost or doubled`,
      ),
    ];
  } finally {
    for (const s of sandboxes) await s.close();
    await world.stop();
  }
}

export async function storeReaderScenario(o: ScenarioOptions & { rounds?: number }): Promise<Row[]> {
  const world = await startStoreWorld();
  const sandbox = await testSandbox({ seed: 24 });
  const client = s3Client(world.s3);
  const scratch = join(tmpdir(), `perks-store-reader-${process.pid}`);
  let reads = 0;
  let retried = 0;
  let attempts = 0;
  const problems: string[] = [];
  let done = false;
  const get = async (key: string) => {
    const r = await client.send(new GetObjectCommand({ Bucket: world.s3.bucket, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  };
  /** One consistent read: the manifest, then its files; a file gone means a newer manifest (read again). */
  const readOnce = async () => {
    let manifest: { base: string; files: { path: string }[] };
    try {
      manifest = JSON.parse((await get('readers/lake/orders/_current.json')).toString('utf8')) as typeof manifest;
    } catch {
      return; // not published yet
    }
    const dir = join(scratch, `attempt-${++attempts}`); // a fresh folder: nothing of an earlier attempt
    try {
      for (const f of manifest.files) {
        const file = join(dir, f.path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, await get(`readers/lake/orders/${f.path}`));
      }
    } catch {
      retried++;
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    const twice = await withLakeConnection(async (c) => {
      const r = await c.runAndReadAll(
        `SELECT count(*) - count(DISTINCT (organisation_group_id, order_id)) AS twice
         FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)`,
        { glob: join(dir, '**', '*.parquet') },
      );
      return Number(r.getRowObjectsJS()[0].twice);
    });
    rmSync(dir, { recursive: true, force: true });
    reads++;
    if (twice > 0) problems.push(`read ${reads}: ${twice} orders counted twice`);
  };
  try {
    const loop = (async () => {
      while (!done) await readOnce();
    })();
    const rounds = o.rounds ?? 3;
    for (let i = 0; i < rounds; i++) {
      // a long lookback keeps October in day files; the next run's usual lookback compacts it into a month file
      for (const lookback of ['40', '7']) {
        const r = await world.perks(
          ['run', '--no-writeback'],
          world.env(sandbox, 'readers', world.machine(), { PERKS_LOOKBACK_DAYS: lookback }),
        );
        if (r.code !== 0) problems.push(`run with lookback ${lookback}: exit ${r.code}`);
      }
    }
    done = true;
    await loop;
    if (reads < 5) problems.push(`only ${reads} reads overlapped the runs`);
    return [
      row(
        'store-readers',
        reads,
        problems,
        `${reads} reads of the orders manifest during ${rounds * 2} runs compacting and publishing: 0 orders twice (${retried} read again after a file went)`,
      ),
    ];
  } finally {
    done = true;
    client.destroy();
    rmSync(scratch, { recursive: true, force: true });
    await sandbox.close();
    await world.stop();
  }
}

/**
 * Every command against a store, each on a machine of its own, after a run and a close: sql, report,
 * closes, models, forget, compact, reopen, status; and `perks store push` of a local output into an empty
 * store, from which a fresh machine continues as the folder would (the same lookback re-read, the same orders).
 */
export async function storeCommandsScenario(o: ScenarioOptions): Promise<Row[]> {
  const world = await startStoreWorld();
  const sandbox = await testSandbox({ seed: 24 });
  const problems: string[] = [];
  let commands = 0;
  try {
    const env = (machine = world.machine()) => world.env(sandbox, 'commands', machine);
    const expectOk = async (args: string[], check?: (stdout: string) => string | undefined) => {
      const r = await world.perks(args, env());
      commands++;
      if (r.code !== 0) problems.push(`${args.join(' ')}: exit ${r.code}: ${messages(r).join(' | ').slice(0, 300)}`);
      const wrong = check?.(r.stdout);
      if (wrong) problems.push(`${args.join(' ')}: ${wrong}`);
    };
    o.log('store commands: run, close, then every other command on machines of their own');
    await expectOk(['run']);
    await expectOk(['close', '--month', '2026-10', '--no-reread', '--by', 'finance']);
    await expectOk(['sql', 'SELECT count(*) AS n FROM revenue_monthly', '--format', 'csv'], (out) =>
      /^n\n[1-9]/.test(out) ? undefined : `no rows: ${out.slice(0, 80)}`,
    );
    await expectOk(['report', 'revenue', '--month', '2026-10', '--format', 'md']);
    await expectOk(['closes', '--format', 'json'], (out) =>
      (JSON.parse(out) as unknown[]).length === 4 ? undefined : 'not one close record per group',
    );
    for (const args of [['models'], ['forget', '--anonymised'], ['compact'], ['build']]) await expectOk(args);
    await expectOk(['reopen', '--month', '2026-10', '--group', '11', '--reason', 'a scenario']);
    await expectOk(['status'], (out) =>
      out.startsWith('status of s3://perks-test/commands ') ? undefined : 'status names no store',
    );
    const keys = [...(await world.objects('commands')).keys()];
    for (const want of ['reports/revenue-2026-10.md', 'docs/models.md', 'marts/revenue_monthly.parquet'])
      if (!keys.includes(want)) problems.push(`${want} is not in the store`);
    // the warehouse is committed as its pieces (under generation keys), never uploaded whole
    if (!(await world.index('commands'))?.files['seed/_seed.json']) problems.push('the store holds no seed/');
    if (keys.includes('warehouse.duckdb'))
      problems.push('warehouse.duckdb was uploaded whole (the store keeps it as seed/)');
    problems.push(...(await consistent(world, 'commands')));

    o.log('store push: a local output into an empty store, then a fresh machine continues');
    const folder = world.machine();
    const local = orgEnv(sandbox, folder);
    if ((await runCli(['run', '--no-writeback'], local, { timeoutMs: 240_000 })).code !== 0)
      problems.push('local run failed');
    const pushed = await world.perks(['store', 'push', folder], world.env(sandbox, 'pushed', world.machine()));
    commands++;
    if (pushed.code !== 0) problems.push(`store push: exit ${pushed.code}: ${messages(pushed).join(' | ')}`);
    const again = await world.perks(['store', 'push', folder], world.env(sandbox, 'pushed', world.machine()));
    if (again.code !== 2 || !/already holds an output \(generation 1\)/.test(messages(again).join('')))
      problems.push(`a second push: exit ${again.code}, ${messages(again).join(' | ')}`);
    const fresh = world.machine();
    const run = await world.perks(['run', '--no-writeback'], world.env(sandbox, 'pushed', fresh));
    if (run.code !== 0) problems.push(`run after push: exit ${run.code}: ${messages(run).join(' | ').slice(0, 300)}`);
    if ((await runCli(['run', '--no-writeback'], local, { timeoutMs: 240_000 })).code !== 0)
      problems.push('second local run failed');
    for (const s of ['orders', 'users', 'credit'])
      if (JSON.stringify(await streamRows(fresh, s)) !== JSON.stringify(await streamRows(folder, s)))
        problems.push(`after push: ${s} differs from the folder's own next run`);
    problems.push(...(await consistent(world, 'pushed')));
    return [
      row(
        'store-commands',
        commands,
        problems,
        `${commands} commands against a store, each on a fresh machine; a local output pushed in and continued`,
      ),
    ];
  } finally {
    await sandbox.close();
    await world.stop();
  }
}

/**
 * An extract into the store killed at 25, 50 and 75 % of its calls (counted at the sandbox), then continued
 * on a fresh machine: the rerun asks only what no checkpoint committed (goal at 50 %: at most 0.6 of a whole
 * extract's calls), skips every orders window a checkpoint committed, and the lake equals a run never killed.
 */
export async function storeCheckpointScenario(o: ScenarioOptions): Promise<Row[]> {
  const world = await startStoreWorld();
  const sandboxes: Awaited<ReturnType<typeof testSandbox>>[] = [];
  const sandbox = async () => {
    const s = await testSandbox({ seed: 42 });
    sandboxes.push(s);
    return s;
  };
  try {
    const rows: Row[] = [];
    for (const share of [0.25, 0.5, 0.75]) {
      o.log(`extract killed at ${share * 100} % of its calls`);
      const r = await extractKilledAt(world, await sandbox(), await sandbox(), share, `checkpoint-${share * 100}`);
      const problems = [...r.problems];
      for (const s of STORE_STREAMS)
        if (JSON.stringify(await streamRows(r.rerunCopy, s)) !== JSON.stringify(await streamRows(r.wholeCopy, s)))
          problems.push(`${s} differs from a run never killed`);
      const ratio = r.rerunCalls / r.wholeCalls;
      const goal = 1 - share + 0.1;
      if (ratio > goal)
        problems.push(`the rerun made ${ratio.toFixed(3)} of a whole extract's calls (goal <= ${goal})`);
      rows.push(
        row(
          `store-checkpoint-${share * 100}`,
          1,
          problems,
          `killed at ${r.killedCalls}/${r.wholeCalls} calls after ${r.checkpoints} checkpoints; the rerun on a fresh machine: ${r.rerunCalls} calls = ${ratio.toFixed(3)} of a whole extract (goal <= ${goal.toFixed(2)}); lake equal`,
        ),
      );
    }
    return rows;
  } finally {
    for (const s of sandboxes) await s.close();
    await world.stop();
  }
}
