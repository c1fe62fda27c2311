/**
 * 3. The incremental contract: extracting the same windows again adds nothing and leaves the marts
 * identical; a state in the far future is refused (exit 2, naming --full-refresh); and a run restarted from any state
 * saved along the way (with the lake of that moment, or with a newer lake) ends in the full set.
 */
import { ExitCode } from '../../../src/shared/exit-codes.js';
import { cpSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientFromConfig } from '../../../src/api/index.js';
import { extract, runExtract } from '../../../src/extract/index.js';
import { streams } from '../../../pipelines/index.js';
import { lakeLanding } from '../../../src/extract/landing/lake-landing.js';
import { StateStore } from '../../../src/lake/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { buildWarehouse } from '../../../src/transform/index.js';
import { completeness, groupsAt, lakeKeys, lakeOrders, type Keys } from '../../support/lake-check.js';
import { martRows } from '../../support/marts.js';
import { seeded } from '../../support/random.js';
import { orgConfig, withSandbox } from '../../support/sandbox.js';
import { withScratch, type Scratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const NOW = new Date(`${TODAY}T12:00:00Z`);
const START = '2026-10-20';

export async function incrementalScenario(o: ScenarioOptions & { restarts: number }): Promise<Row[]> {
  return withSandbox({ seed: 101, today: TODAY }, (sandbox) =>
    withScratch('incremental', async (scratch) => {
      const out = scratch.dir('main');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: START });
      await extract(config, { output: outputAt(out), now: NOW });
      const reference = await lakeKeys(out);
      return [
        await sameWindowsTwice(out, config),
        await farFuture(sandbox, scratch, out),
        await restarts(sandbox, scratch, reference, o),
      ];
    }),
  );
}

async function sameWindowsTwice(out: string, config: ReturnType<typeof orgConfig>): Promise<Row> {
  const problems: string[] = [];
  const first = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
  const lakeBefore = JSON.stringify(await lakeOrders(out));
  // The balances are read again by the reruns: when they were read moves on (each run stamps after the one
  // before, src/lake/run-stamps.ts), what they read does not.
  const observed = ['balance_read_at'];
  const martsBefore = await martRows(out, observed);
  // The same windows again: a backfill of ten days already landed, then a full refresh of everything.
  const again = await extract(config, {
    output: outputAt(out),
    now: NOW,
    startDate: '2026-11-05',
    endDate: '2026-11-15',
  });
  const refresh = await extract(config, { output: outputAt(out), now: NOW, fullRefresh: true });
  const second = await buildWarehouse({ output: outputAt(out), asOf: TODAY });
  const lakeAfter = JSON.stringify(await lakeOrders(out));
  const martsAfter = await martRows(out, observed);
  if (!first.ok || !second.ok) problems.push(`a build failed: ${first.error ?? second.error}`);
  if (again.exitCode || refresh.exitCode) problems.push(`a rerun exited ${again.exitCode || refresh.exitCode}`);
  if (lakeAfter !== lakeBefore) problems.push('the lake orders changed');
  const changed = Object.keys(martsBefore).filter((m) => martsBefore[m] !== martsAfter[m]);
  if (changed.length) problems.push(`marts changed: ${changed.join(', ')}`);
  const rows = Object.values(martsAfter).reduce((n, m) => n + JSON.parse(m).length, 0);
  const windows = (again.streams.find((s) => s.name === 'orders')?.groups ?? []).reduce((n, g) => n + g.windows, 0);
  return row(
    'same windows twice add nothing',
    2,
    problems,
    `${windows} windows re-extracted, then a full refresh: lake orders unchanged, ${Object.keys(martsAfter).length} marts identical (${rows} rows)`,
  );
}

/**
 * A watermark years ahead (a clock that was wrong, a state copied from elsewhere): refused loudly (exit 2,
 * the line naming --full-refresh), not "nothing to extract" with exit 0 run after run; nothing is called or changed.
 */
async function farFuture(sandbox: Sandbox, scratch: Scratch, from: string): Promise<Row> {
  const out = scratch.dir('future');
  cpSync(from, out, { recursive: true });
  // every windowed stream: orders by day, redemption stats by month
  const streams = ['orders', 'redemption_stats'] as const;
  for (const stream of streams) {
    for (const g of sandbox.world.groups) {
      writeFileSync(
        join(out, 'state', stream, `${g.id}.json`),
        JSON.stringify({
          watermark: '2099-01-01',
          first_day: START,
          lookback_days: 7,
          pass: { upper: '2099-01-01', done: [] },
        }),
      );
    }
  }
  const before = lakeFiles(out, streams); // the groups' snapshot of the day is landed on every run
  const result = await extract(orgConfig(sandbox, out, { PERKS_START_DATE: START }), {
    output: outputAt(out),
    now: NOW,
    streams: [...streams],
  });
  const problems: string[] = [];
  if (result.exitCode !== ExitCode.config) problems.push(`exit ${result.exitCode}, expected ${ExitCode.config}`);
  const said = result.streams.map((x) => x.error ?? '').filter(Boolean);
  if (!said.length || !said.every((e) => /beyond tomorrow.*--full-refresh/.test(e)))
    problems.push(`said: ${said[0] ?? '(nothing)'}`);
  const calls = streams.map((name) => {
    const s = result.streams.find((x) => x.name === name);
    if (s?.calls)
      problems.push(`${s.calls} ${name} calls (${s.groups.reduce((n, g) => n + g.windows, 0)} windows re-extracted)`);
    return `${s?.calls ?? 0} ${name} calls`;
  });
  if (lakeFiles(out, streams) !== before) problems.push('the lake changed');
  return row(
    'a state in the far future is refused, naming --full-refresh',
    1,
    problems,
    `exit ${result.exitCode}, ${calls.join(', ')}, lake ${problems.some((p) => p.includes('changed')) ? 'changed' : 'unchanged'}`,
  );
}

/** Every file of the streams' lake with its size and time: a re-landed window replaces its files. */
const lakeFiles = (out: string, streams: readonly string[]): string =>
  streams
    .flatMap((stream) =>
      readdirSync(join(out, 'lake', stream), { recursive: true }).map((f) => join(out, 'lake', stream, String(f))),
    )
    .sort()
    .map((f) => `${f} ${statSync(f).size} ${statSync(f).mtimeMs}`)
    .join('\n');

/**
 * Saved states: a run whose state store copies the whole output (committed files only) every few
 * writes. Each copy, and each copy's state over the final lake, is run again to completion.
 */
async function restarts(
  sandbox: Sandbox,
  scratch: Scratch,
  reference: Keys,
  o: ScenarioOptions & { restarts: number },
): Promise<Row> {
  const out = scratch.dir('saving');
  const saved: string[] = [];
  const random = seeded(o.seed);
  const committedOnly = (src: string) => !src.includes('perks-tmp') && !src.endsWith('.perks.lock');
  class SavingStore extends StateStore {
    private writes = 0;
    override async write(stream: string, key: string, value: unknown): Promise<void> {
      await super.write(stream, key, value);
      if (++this.writes % 7 === 0 && random() < 0.6) {
        const copy = scratch.dir(`saved${saved.length}`);
        cpSync(out, copy, { recursive: true, filter: committedOnly });
        saved.push(copy);
      }
    }
  }
  const config = orgConfig(sandbox, out, { PERKS_START_DATE: START });
  const client = clientFromConfig(config);
  try {
    await runExtract(
      config,
      { now: NOW },
      { output: outputAt(out), streams, client, landing: lakeLanding(out, 'saving', NOW), state: new SavingStore(out) },
    );
  } finally {
    await client.close();
  }
  const picks = saved
    .filter((_, i) => i % Math.max(1, Math.floor(saved.length / o.restarts)) === 0)
    .slice(0, o.restarts);
  const problems: string[] = [];
  let runs = 0;
  for (const copy of picks) {
    // As saved (lake and state of one moment), then the state of that moment over the final lake.
    const behind = scratch.dir('behind');
    cpSync(out, behind, { recursive: true });
    cpSync(join(copy, 'state'), join(behind, 'state'), { recursive: true, force: true });
    for (const dir of [copy, behind]) {
      runs += 1;
      const result = await extract(orgConfig(sandbox, dir, { PERKS_START_DATE: START }), {
        output: outputAt(dir),
        now: NOW,
      });
      const c = await completeness(sandbox, dir, groupsAt(sandbox, NOW), START, reference);
      if (result.exitCode !== 0) problems.push(`restart ${runs}: exit ${result.exitCode}`);
      if (c.problem) problems.push(`restart ${runs}: ${c.problem}`);
    }
  }
  if (picks.length === 0) problems.push('no state was saved during the run');
  return row(
    'restart from any saved state',
    runs,
    problems.slice(0, 4),
    `${picks.length} of ${saved.length} saved states, each as saved and over the final lake: ${runs - new Set(problems.map((p) => p.split(':')[0])).size}/${runs} ended in the full set`,
  );
}
