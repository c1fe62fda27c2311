/**
 * 1 and 2, downstream of the lake: `perks build` killed with SIGKILL at random moments (the previous
 * warehouse and marts stay whole, readers never see a torn mart, the next build succeeds and leaves no
 * temporary file), and `perks writeback` killed mid-run (after a post and before its ledger entry,
 * among other moments): the rerun leaves every interaction stored upstream exactly once.
 */
import { atInstant } from '../../support/clock.js';
import { cpSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { extract } from '../../../src/extract/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { buildWarehouse } from '../../../src/transform/index.js';
import { runWriteback } from '../../../src/writeback/index.js';
import { CRASH_ENV } from '../../../src/shared/crash-points.js';
import { startCli } from '../../support/cli.js';
import { leftovers } from '../../support/lake-check.js';
import { martRows, startMartsReader } from '../../support/marts.js';
import { seeded, sleep } from '../../support/random.js';
import { orgConfig, orgEnv, testSandbox, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
/** Named build kills: after the first model, after the tenth, and with the new warehouse complete but not in place. */
const NAMED_BUILD_KILLS = ['mid-build:1', 'mid-build:10', 'before-swap'] as const;
const NOW = new Date(`${TODAY}T12:00:00Z`);
const START = '2026-10-01';

/** A lake, a warehouse and marts of the sandbox's data, built in-process. */
async function builtOutput(sandbox: Sandbox, out: string): Promise<void> {
  await extract(orgConfig(sandbox, out, { PERKS_START_DATE: START }), { output: outputAt(out), now: NOW });
  const built = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
  if (!built.ok) throw new Error(`the first build failed: ${built.error}`);
}

export async function buildCrashScenario(o: ScenarioOptions & { kills: number }): Promise<Row[]> {
  const random = seeded(o.seed);
  // In-process steps on the instant the CLI children run at (orgEnv's PERKS_NOW), so both build the same marts.
  return atInstant(NOW, () => buildCrashScenarioAtNoon(o, random));
}

async function buildCrashScenarioAtNoon(o: ScenarioOptions & { kills: number }, random: () => number): Promise<Row[]> {
  return withSandbox({ seed: 111, today: TODAY }, (sandbox) =>
    withScratch('build-crash', async (scratch) => {
      const out = scratch.dir();
      await builtOutput(sandbox, out);
      const before = await martRows(out);
      const env = orgEnv(sandbox, out);
      // How long a build takes, from its first step line to its end.
      const timed = startCli(['build', '--as-of', TODAY], env);
      await timed.saw('lake views');
      const began = performance.now();
      await timed.done;
      const span = performance.now() - began;
      const reader = startMartsReader(out, before);
      const problems: string[] = [];
      let killedMidBuild = 0;
      let failure: { error: unknown } | undefined;
      // What a killed build must leave: the previous warehouse, whole, the same marts; then a good build.
      const afterKill = async (label: string) => {
        const whole = await warehouseOpens(out);
        if (whole) problems.push(`${label}: the warehouse does not open: ${whole}`);
        const now = await martRows(out);
        const changed = Object.keys(before).filter((m) => before[m] !== now[m]);
        if (changed.length) problems.push(`${label}: marts changed: ${changed.join(', ')}`);
        const rebuilt = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
        if (!rebuilt.ok) problems.push(`${label}: the next build failed: ${rebuilt.error}`);
        const left = leftovers(out);
        if (left.length) problems.push(`${label}: left ${left.slice(0, 2).join(', ')}`);
      };
      const named: readonly string[] = NAMED_BUILD_KILLS;
      try {
        for (let i = 0; i < o.kills; i++) {
          const child = startCli(['build', '--as-of', TODAY], env);
          await child.saw('lake views');
          await sleep(Math.floor(random() * span));
          child.child.kill('SIGKILL');
          if ((await child.done).signal === 'SIGKILL') killedMidBuild += 1;
          await afterKill(`kill ${i + 1}`);
        }
        // The named points (src/shared/crash-points.ts): after a model, and with the new warehouse complete.
        for (const at of named) {
          const child = startCli(['build', '--as-of', TODAY], { ...env, [CRASH_ENV]: at });
          if ((await child.done).signal !== 'SIGKILL') problems.push(`${at}: the build was not killed there`);
          await afterKill(at);
        }
      } catch (err) {
        failure = { error: err };
      }
      const reads = await reader.stop();
      if (failure) throw failure.error;
      o.log(`build crash: ${killedMidBuild}/${o.kills} killed mid-build (a build takes ${span} ms)`);
      return [
        row(
          'crash: SIGKILL mid-build',
          o.kills + named.length,
          problems,
          `${killedMidBuild} killed at random moments and at ${named.join(', ')}: previous warehouse and marts whole ${o.kills + named.length - problems.filter((p) => /open|marts/.test(p)).length}/${o.kills + named.length}, next build ok, temp files left ${problems.filter((p) => p.includes('left')).length}`,
        ),
        row(
          'readers during builds (marts)',
          reads.reads,
          reads.problems,
          `${reads.reads} reads, ${reads.errors} read errors, ${reads.torn} torn marts`,
        ),
      ];
    }),
  );
}

async function warehouseOpens(out: string): Promise<string> {
  try {
    const db = await DuckDBInstance.create(outputAt(out).warehouse, { access_mode: 'READ_ONLY' });
    const c = await db.connect();
    await c.runAndReadAll('SELECT count(*) FROM revenue_monthly');
    c.closeSync();
    db.closeSync();
    return '';
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

/** Interactions stored upstream per interaction_id. */
function storedTimes(sandbox: Sandbox): Map<string, number> {
  const times = new Map<string, number>();
  for (const user of sandbox.world.users.all())
    for (const i of sandbox.world.interactionsOf(user))
      times.set(i.interaction_id, (times.get(i.interaction_id) ?? 0) + 1);
  return times;
}

const storedTotal = (sandbox: Sandbox) => Object.values(sandbox.stats().interactionsStored).reduce((a, b) => a + b, 0);

export async function writebackCrashScenario(o: ScenarioOptions & { kills: number }): Promise<Row[]> {
  const random = seeded(o.seed + 1);
  return withScratch('writeback-crash', async (scratch) => {
    const base = scratch.dir('base');
    await withSandbox({ seed: 112, today: TODAY }, (sandbox) => builtOutput(sandbox, base));
    const problems: string[] = [];
    let rows = 0;
    let killedMidRun = 0;
    for (let i = 0; i < o.kills; i++) {
      // The same data on a fresh platform each time (same seed and day), so every row is to be sent again.
      const sandbox = await testSandbox({ seed: 112, today: TODAY });
      try {
        const out = scratch.dir(`wb${i}`);
        cpSync(base, out, { recursive: true });
        const config = orgConfig(sandbox, out);
        const planned = (
          await runWriteback({ output: outputAt(out), config, dryRun: true, previewRows: 1_000_000 })
        ).preview.map((r) => String(r.interaction_id));
        rows += planned.length;
        const before = storedTotal(sandbox);
        // Odd kills at the named point after-post (a batch posted and answered, no outcome recorded: the
        // window the API cannot tell about), even ones once the sandbox stored a random number of posts.
        const batches = Math.max(1, Math.floor(planned.length / 8));
        const named = i % 2 === 0 ? `after-post:${1 + Math.floor(random() * batches)}` : undefined;
        const child = startCli(
          ['writeback'],
          orgEnv(sandbox, out, { PERKS_RATE_LIMIT: '3000', ...(named ? { [CRASH_ENV]: named } : {}) }),
        );
        const target = 1 + Math.floor(random() * (planned.length / 2));
        const deadline = performance.now() + 60_000;
        if (!named) {
          while (
            storedTotal(sandbox) - before < target &&
            child.child.exitCode === null &&
            performance.now() < deadline
          )
            await sleep(2);
          child.child.kill('SIGKILL');
        }
        if ((await child.done).signal === 'SIGKILL') killedMidRun += 1;
        else if (named) problems.push(`kill ${i + 1}: the write-back was not killed at ${named}`);
        const rerun = await runWriteback({ output: outputAt(out), config, pendingGraceMs: 0 });
        const times = storedTimes(sandbox);
        const missing = planned.filter((id) => !times.has(id)).length;
        const twice = planned.filter((id) => (times.get(id) ?? 0) > 1).length;
        if (missing || twice || rerun.rejected)
          problems.push(
            `kill ${i + 1} ${named ? `at ${named}` : `after ${target} posts`}: ${missing} missing, ${twice} stored twice, ${rerun.rejected} rejected`,
          );
      } finally {
        await sandbox.close();
      }
    }
    o.log(`writeback crash: ${killedMidRun}/${o.kills} killed mid-run`);
    return [
      row(
        'crash: SIGKILL during write-back',
        o.kills,
        problems,
        `${rows} rows over ${o.kills} runs (${killedMidRun} killed mid-run): ${problems.length ? 'NOT ' : ''}each stored exactly once after the rerun`,
      ),
    ];
  });
}
