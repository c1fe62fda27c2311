/**
 * `npm run reliability [-- --long] [--only crash,faults] [--seed N]`: every scenario against the sandbox
 * over real HTTP and real files, then one table: scenario, runs, outcome, figure. Exit code 1 when a
 * figure misses its goal. The fast counts also run in `npm test` (test/reliability/*.test.ts).
 */
import './pin-clock.js'; // first: scenario modules read the clock as they load
import { formatTable, row, type Row, type Scenario, type ScenarioOptions } from './table.js';
import { SCENARIOS, WAIT_BOUND } from './scenarios/index.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? '') : undefined;
};
const unknown = args.filter(
  (a, i) =>
    a.startsWith('--') &&
    !['--long', '--only', '--seed'].includes(a) &&
    !['--only', '--seed'].includes(args[i - 1] ?? ''),
);
if (unknown.length) {
  process.stderr.write(`reliability: unknown option ${unknown[0]}; use --long, --only <names>, --seed <n>\n`);
  process.exit(2);
}
const only = flag('only')?.split(',').filter(Boolean);
for (const name of only ?? []) {
  if (!(name in SCENARIOS)) {
    process.stderr.write(`reliability: unknown scenario "${name}"; known: ${Object.keys(SCENARIOS).join(', ')}\n`);
    process.exit(2);
  }
}
const seed = flag('seed') !== undefined ? Number(flag('seed')) : Date.now() % 1_000_000;
const options: ScenarioOptions = {
  long: args.includes('--long'),
  seed,
  log: (line) => process.stderr.write(`  ${line}\n`),
};

const started = Date.now();
process.stderr.write(`reliability suite (${options.long ? 'long' : 'default'} counts, seed ${seed})\n`);

async function runOne(name: string, scenario: Scenario): Promise<Row[]> {
  const t = Date.now();
  process.stderr.write(`${name}…\n`);
  try {
    return await scenario(options);
  } catch (err) {
    return [row(name, 0, [`the scenario itself failed: ${(err as Error).stack ?? String(err)}`], 'did not finish')];
  } finally {
    process.stderr.write(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
  }
}

// Wait-bound scenarios start at once and run beside the others; the table keeps the declared order.
const chosen = Object.entries<Scenario>(SCENARIOS).filter(([name]) => !only || only.includes(name));
const results = new Map<string, Promise<Row[]>>();
for (const [name, scenario] of chosen) if (WAIT_BOUND.has(name)) results.set(name, runOne(name, scenario));
for (const [name, scenario] of chosen)
  if (!WAIT_BOUND.has(name)) results.set(name, Promise.resolve(await runOne(name, scenario)));
const rows: Row[] = [];
for (const [name] of chosen) rows.push(...(await results.get(name)!));
process.stdout.write(formatTable(rows));
process.stdout.write(
  `\n${rows.filter((r) => r.ok).length}/${rows.length} at goal in ${((Date.now() - started) / 1000).toFixed(0)} s (seed ${seed})\n`,
);
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
