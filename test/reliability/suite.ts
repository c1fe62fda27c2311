/**
 * `npm run reliability [-- --long] [--only crash,faults] [--seed N] [--under-load]`: every scenario against
 * the sandbox over real HTTP and real files, then one table: scenario, runs, outcome, figure. Exit code 1
 * when a figure misses its goal. With `--under-load` the scenarios run twice, quiet and then with every core
 * kept busy by other processes (load.ts), and the table shows both figures side by side. The fast counts
 * also run in `npm test` (test/reliability/*.test.ts).
 */
import './pin-clock.js'; // first: scenario modules read the clock as they load
import { randomInt } from 'node:crypto';
import {
  formatPairTable,
  formatTable,
  row,
  selectByName,
  type Row,
  type Scenario,
  type ScenarioOptions,
} from './table.js';
import { SCENARIOS, WAIT_BOUND } from './scenarios/index.js';
import { loadAverage, startBurners } from './load.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? '') : undefined;
};
const unknown = args.filter(
  (a, i) =>
    a.startsWith('--') &&
    !['--long', '--only', '--seed', '--under-load'].includes(a) &&
    !['--only', '--seed'].includes(args[i - 1] ?? ''),
);
if (unknown.length) {
  process.stderr.write(
    `reliability: unknown option ${unknown[0]}; use --long, --only <names>, --seed <n>, --under-load\n`,
  );
  process.exit(2);
}
let chosen: [string, Scenario][];
try {
  const only = flag('only')?.split(',').filter(Boolean);
  chosen = selectByName('scenario', Object.entries<Scenario>(SCENARIOS), ([name]) => name, only);
} catch (err) {
  process.stderr.write(`reliability: --only: ${(err as Error).message}\n`);
  process.exit(2);
}
// a random seed unless given, printed so a failure can be replayed (never the clock's: tests do not read it)
const seed = flag('seed') !== undefined ? Number(flag('seed')) : randomInt(1_000_000);
const underLoad = args.includes('--under-load');
const options: ScenarioOptions = {
  long: args.includes('--long'),
  seed,
  log: (line) => process.stderr.write(`  ${line}\n`),
};

async function runOne(name: string, scenario: Scenario): Promise<Row[]> {
  const t = performance.now();
  process.stderr.write(`${name}…\n`);
  try {
    return await scenario(options);
  } catch (err) {
    return [row(name, 0, [`the scenario itself failed: ${(err as Error).stack ?? String(err)}`], 'did not finish')];
  } finally {
    process.stderr.write(`${name}: ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
}

interface Pass {
  rows: Row[];
  seconds: number;
  /** The 1-minute load average as the pass began and as it ended. */
  load: [string, string];
}

/** Runs the chosen scenarios once. Wait-bound ones start at once and run beside the others; the table keeps the declared order. */
async function runPass(): Promise<Pass> {
  const started = performance.now();
  const loadBefore = loadAverage();
  const results = new Map<string, Promise<Row[]>>();
  for (const [name, scenario] of chosen) if (WAIT_BOUND.has(name)) results.set(name, runOne(name, scenario));
  for (const [name, scenario] of chosen)
    if (!WAIT_BOUND.has(name)) results.set(name, Promise.resolve(await runOne(name, scenario)));
  const rows: Row[] = [];
  for (const [name] of chosen) rows.push(...(await results.get(name)!));
  return { rows, seconds: (performance.now() - started) / 1000, load: [loadBefore, loadAverage()] };
}

const atGoal = (rows: Row[]) => `${rows.filter((r) => r.ok).length}/${rows.length} at goal`;
const describePass = (label: string, p: Pass) =>
  `${label}: ${atGoal(p.rows)} in ${p.seconds.toFixed(0)} s (load average ${p.load[0]} at the start, ${p.load[1]} at the end)`;

process.stderr.write(`reliability suite (${options.long ? 'long' : 'default'} counts, seed ${seed})\n`);
if (!underLoad) {
  const pass = await runPass();
  process.stdout.write(formatTable(pass.rows));
  process.stdout.write(
    `\n${atGoal(pass.rows)} in ${pass.seconds.toFixed(0)} s (seed ${seed}, load average ${pass.load[1]})\n`,
  );
  process.exitCode = pass.rows.every((r) => r.ok) ? 0 : 1;
} else {
  process.stderr.write(`quiet pass (load average ${loadAverage()})\n`);
  const quiet = await runPass();
  const burners = startBurners();
  process.stderr.write(`pass under load: ${burners.count} CPU burners, one per core (load average ${loadAverage()})\n`);
  let loaded: Pass;
  try {
    loaded = await runPass();
  } finally {
    await burners.stop();
  }
  process.stdout.write(formatPairTable(quiet.rows, loaded.rows));
  process.stdout.write(
    `\n${describePass('quiet', quiet)}\n${describePass(`under load (${burners.count} CPU burners)`, loaded)}\n(seed ${seed})\n`,
  );
  process.exitCode = [...quiet.rows, ...loaded.rows].every((r) => r.ok) ? 0 : 1;
}
