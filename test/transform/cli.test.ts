/** `perks build`, `perks sql` and `perks models` as a user runs them: child processes, PERKS_OUTPUT set. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runCli, stderrLines, type CliResult } from '../support/cli.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query } from './helpers.js';

let outDir: string;
let build: CliResult;
const perks = (...args: string[]) => runCli(args, { PERKS_OUTPUT: outDir });

beforeAll(async () => {
  outDir = await writeFixtureLake();
  build = await perks('build', '--as-of', AS_OF, '--quiet');
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

test('perks build builds the warehouse and the marts and says so', () => {
  expect(build.stderr).toBe('');
  expect(build.code).toBe(0);
  expect(build.stdout).toMatch(/^build as of 2026-04-01: \d+ models, \d+ data tests passed, 11 marts exported\n/);
  expect(existsSync(join(outDir, 'warehouse.duckdb'))).toBe(true);
  expect(existsSync(join(outDir, 'marts', 'savings_monthly.parquet'))).toBe(true);
});

test("perks build again rebuilds no month of stg_orders, says so, and --verify-incremental says the answer is a full build's", async () => {
  const again = await perks('build', '--as-of', AS_OF, '--verify-incremental');
  expect(again.code).toBe(0);
  // the months stg_orders holds, counted apart: the build line counts those, not the intervals of its inputs
  const held = await query(
    join(outDir, 'warehouse.duckdb'),
    "SELECT count(DISTINCT date_trunc('month', order_date)) AS n FROM stg_orders",
  );
  const months = Number(held[0].n);
  expect(months).toBeGreaterThan(1);
  expect(again.stdout).toContain(`\n  stg_orders: nothing rebuilt, its ${months} months kept\n`);
  // nothing changed: every model kept (or no month rebuilt), and the data tests not run again, say the step lines
  const kept = '(passed at the previous build: nothing it reads changed)';
  expect(again.stderr).toContain(`  stg_orders · not_null(order_id) ${kept}\n`);
  expect(again.stderr).toContain(`  engagement_users · not_null(segment) ${kept}\n`);
  expect(again.stderr).toMatch(/ {2}engagement_users \(kept: nothing it reads changed\)\n/);
  expect(again.stdout).toMatch(/^build as of 2026-04-01: \d+ models \(\d+ kept: nothing they read changed\), /);
  expect(again.stdout).toContain('\n  verified: every table equals a full build, row for row\n');
  const full = await perks('build', '--as-of', AS_OF, '--quiet', '--full');
  expect(full.stdout).toContain(`\n  stg_orders: built whole, ${months} months (asked for (--full))\n`);
});

test('an incremental build killed after stg_orders leaves the previous warehouse as it was, and the next one verifies', async () => {
  const warehouse = join(outDir, 'warehouse.duckdb');
  const before = readFileSync(warehouse).toString('base64');
  const killed = await runCli(['build', '--as-of', AS_OF, '--quiet'], {
    PERKS_OUTPUT: outDir,
    PERKS_CRASH_AT: 'mid-build:8', // right after the eighth model built: stg_orders, by intervals
  });
  expect(killed.signal).toBe('SIGKILL');
  expect(readFileSync(warehouse).toString('base64')).toBe(before);
  const next = await perks('build', '--as-of', AS_OF, '--quiet', '--verify-incremental');
  expect(next.code).toBe(0);
  expect(next.stdout).toContain('verified');
  expect(readdirSync(outDir).filter((f) => /\.tmp-|\.spill|verify-incremental/.test(f))).toEqual([]);
});

test('perks build refuses a memory limit that is not a size with one line and exit code 2', async () => {
  const r = await perks('build', '--memory-limit', 'lots');
  expect(r.code).toBe(2);
  expect(stderrLines(r)).toEqual([
    'perks: --memory-limit (or PERKS_BUILD_MEMORY_LIMIT)="lots" is invalid: expected a size such as 1GB',
  ]);
});

test('perks build refuses an impossible as-of day with one line and exit code 2', async () => {
  const r = await perks('build', '--as-of', '2026-02-30');
  expect(r.code).toBe(2);
  expect(stderrLines(r)).toEqual(['perks: --as-of="2026-02-30" is invalid: expected a real calendar date']);
});

test('perks sql answers a query as a table, CSV or JSON', async () => {
  const sql =
    "SELECT order_currency, sum(face_value) AS face_value FROM revenue_monthly WHERE month = DATE '2026-03-01' GROUP BY ALL ORDER BY 1";
  const table = await perks('sql', sql);
  expect(table.code).toBe(0);
  expect(table.stdout).toBe(
    [
      'order_currency | face_value',
      '---------------+-----------',
      'EUR            | 50.00',
      'GBP            | 40.00',
      'USD            | 50.00',
      '(3 rows)',
      '',
    ].join('\n'),
  );
  const csv = await perks('sql', sql, '--format', 'csv');
  expect(csv.stdout).toBe('order_currency,face_value\nEUR,50.00\nGBP,40.00\nUSD,50.00\n');
  const json = await perks('sql', sql, '--format', 'json');
  expect(JSON.parse(json.stdout)).toEqual([
    { order_currency: 'EUR', face_value: '50.00' },
    { order_currency: 'GBP', face_value: '40.00' },
    { order_currency: 'USD', face_value: '50.00' },
  ]);
  // whole numbers are JSON numbers, every digit kept; decimals exact strings
  const typed = await perks(
    'sql',
    'SELECT 625::BIGINT AS users, 9007199254740993::BIGINT AS big, -3::TINYINT AS small, 0.10::DECIMAL(4,2) AS rate, NULL::INTEGER AS none',
    '--format',
    'json',
  );
  expect(typed.stdout).toBe(
    '[\n  {\n    "users": 625,\n    "big": 9007199254740993,\n    "small": -3,\n    "rate": "0.10",\n    "none": null\n  }\n]\n',
  );
  // a reader of doubles rounds the big one; the text above keeps every digit
  expect(JSON.parse(typed.stdout)).toEqual([{ users: 625, big: 2 ** 53, small: -3, rate: '0.10', none: null }]);
});

test('perks sql refuses to write, with one line and exit code 2, and the warehouse is untouched', async () => {
  const mtime = statSync(join(outDir, 'warehouse.duckdb')).mtimeMs;
  for (const write of [
    'CREATE TABLE x AS SELECT 1',
    'DELETE FROM revenue_monthly',
    "COPY revenue_monthly TO '/tmp/perks-copy.csv'",
    'SELECT 1; DROP TABLE stg_orders',
  ]) {
    const r = await perks('sql', write);
    expect(r.code, write).toBe(2);
    expect(stderrLines(r), write).toHaveLength(1);
    expect(r.stderr, write).toMatch(/^perks: the warehouse is read-only here: (CREATE|DELETE|COPY|DROP) is refused/);
  }
  expect(statSync(join(outDir, 'warehouse.duckdb')).mtimeMs).toBe(mtime);
  const count = await perks('sql', 'SELECT count(*) AS n FROM stg_orders', '--format', 'csv');
  expect(count.stdout).toBe('n\n9\n'); // 10 order rows in the lake, one of them twice
});

test('perks sql writes no file: SET, PRAGMA, EXPORT, ATTACH, INSTALL, CALL and writing functions exit 2 and leave nothing behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perks-sql-files-'));
  const at = (name: string) => join(dir, name);
  const attempts: [string, RegExp][] = [
    [`SET log_query_path='${at('q.log')}'; SELECT 42`, /SET is refused/],
    [`PRAGMA enable_profiling='json'; PRAGMA profiling_output='${at('prof.json')}'; SELECT 43`, /PRAGMA is refused/],
    [`EXPORT DATABASE '${at('exp')}'`, /EXPORT is refused/],
    [`COPY (SELECT 1) TO '${at('copy.csv')}'`, /COPY is refused/],
    [`ATTACH '${at('other.duckdb')}' AS other`, /ATTACH is refused/],
    ['INSTALL excel', /INSTALL is refused/],
    ['LOAD excel', /LOAD is refused/],
    [`CALL enable_logging(storage='file', storage_config={'path': '${at('log')}'})`, /CALL is refused/],
    [
      `SELECT * FROM enable_logging(storage='file', storage_config={'path': '${at('log')}'})`,
      /enable_logging\(\) is refused/,
    ],
    [`FROM enable_profiling(save_location='${at('p.json')}', format='json')`, /enable_profiling\(\) is refused/],
    [`SELECT 1 FROM query('SELECT 1') CROSS JOIN (SELECT 2)`, /query\(\) is refused/],
    [
      `EXPLAIN ANALYZE SELECT * FROM enable_logging(storage='file', storage_config={'path': '${at('log')}'})`,
      /enable_logging\(\) is refused/,
    ],
  ];
  try {
    for (const [sql, message] of attempts) {
      const r = await perks('sql', sql);
      expect(r.code, sql).toBe(2);
      expect(stderrLines(r), sql).toEqual([expect.stringMatching(/^perks: the warehouse is read-only here: /)]);
      expect(r.stderr, sql).toMatch(message);
      expect(readdirSync(dir), sql).toEqual([]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('perks sql still reads: DESCRIBE, SHOW, SUMMARIZE, WITH, EXPLAIN and the lake views over Parquet', async () => {
  for (const sql of [
    'DESCRIBE revenue_monthly',
    'SHOW TABLES',
    'SUMMARIZE stg_orders',
    'WITH o AS (FROM stg_orders) SELECT count(*) FROM o',
    'EXPLAIN SELECT 1 -- a comment; with a semicolon',
  ]) {
    const r = await perks('sql', sql, '--format', 'csv');
    expect(r.stderr, sql).toBe('');
    expect(r.code, sql).toBe(0);
  }
  const lake = await perks('sql', "SELECT count(*) AS n FROM lake_orders WHERE ';' = $$;$$ /* ; */", '--format', 'csv');
  expect(lake.stderr).toBe('');
  expect(lake.stdout).toBe('n\n10\n');
});

test('perks sql says what is wrong with a bad query or a missing warehouse', async () => {
  const bad = await perks('sql', 'SELEC 1');
  expect(bad.code).toBe(2);
  expect(stderrLines(bad)).toEqual([
    expect.stringMatching(/^perks: the query is not valid SQL: .*syntax error at or near "SELEC"$/),
    'LINE 1: SELEC 1',
    '        ^',
  ]);
  const none = await runCli(['sql', 'SELECT 1'], { PERKS_OUTPUT: join(outDir, 'nowhere') });
  expect(none.code).toBe(2);
  expect(stderrLines(none)).toEqual([
    `perks: no warehouse at ${join(outDir, 'nowhere', 'warehouse.duckdb')}: run \`perks build\` first (or set PERKS_OUTPUT to the output folder that holds it)`,
  ]);
});

test('perks models lists every model with grain, columns and dependencies, and writes <out>/docs/models.md', async () => {
  const r = await perks('models', '--format', 'json');
  expect(r.code).toBe(0);
  const docs = JSON.parse(r.stdout) as {
    name: string;
    layer: string;
    grain: string;
    depends_on: string[];
    columns: { name: string; type: string; description?: string }[];
  }[];
  const revenue = docs.find((d) => d.name === 'revenue_monthly')!;
  expect(revenue.layer).toBe('marts');
  expect(revenue.grain).toBe('one row per organisation_group_id, month, order_currency, order_status');
  expect(Object.keys(revenue)).not.toContain('dependsOn'); // snake_case keys, as every JSON the CLI prints
  expect(revenue.depends_on).toEqual([
    'close_figures',
    'close_records',
    'stg_groups',
    'stg_month_states',
    'stg_orders',
  ]);
  expect(revenue.columns.slice(0, 5)).toMatchObject([
    { name: 'organisation_group_id', type: 'BIGINT' },
    { name: 'month', type: 'DATE' },
    { name: 'order_currency', type: 'VARCHAR' },
    { name: 'order_status', type: 'VARCHAR' },
    { name: 'orders', type: 'BIGINT' },
  ]);
  // every column of every mart (the BI contract) says what it means, and no meaning names a column that is gone
  for (const mart of docs.filter((d) => d.layer === 'marts')) {
    const undocumented = mart.columns.filter((c) => !c.description).map((c) => c.name);
    expect(undocumented, `${mart.name}: columns without a meaning in its header's columns: block`).toEqual([]);
  }
  const sqlHeader = readFileSync('sql/marts/revenue_monthly.sql', 'utf8');
  const described = [...sqlHeader.matchAll(/^-- {3}(\w+): /gm)]
    .map((m) => m[1])
    .filter((n) => !['unique', 'not_null', 'accepted_values', 'relationships'].includes(n));
  expect(described.sort()).toEqual(revenue.columns.map((c) => c.name).sort());
  expect(readFileSync(join(outDir, 'docs', 'models.md'), 'utf8')).toContain(
    '| group_revenue | DECIMAL(38,2) | sum of the group',
  );
  expect(docs.find((d) => d.name === 'stg_orders')!.depends_on).toEqual(['lake_orders', 'stg_user_emails']);
  expect(docs.find((d) => d.name === 'stg_user_emails')).toMatchObject({ materialized: 'ephemeral', layer: 'staging' });
  // dependencies come before what reads them
  const order = docs.map((d) => d.name);
  expect(order.indexOf('stg_users')).toBeLessThan(order.indexOf('stg_user_emails'));
  expect(order.indexOf('stg_user_emails')).toBeLessThan(order.indexOf('stg_orders'));
  expect(order.indexOf('savings_monthly')).toBeLessThan(order.indexOf('engagement_monthly'));
  expect(readFileSync(join(outDir, 'docs', 'models.md'), 'utf8')).toContain('## engagement_users');
  expect(readFileSync(join(outDir, 'docs', 'models.md'), 'utf8')).toMatch(
    /\| orders \| organisation_group_id, order_month \|/,
  );
});

test('a damaged warehouse: perks sql says to rebuild it with perks build, and perks build does, whole from the lake, saying why', async () => {
  const warehouse = join(outDir, 'warehouse.duckdb');
  const revenue = (await perks('sql', 'SELECT * FROM revenue_monthly ORDER BY ALL', '--format', 'csv')).stdout;
  const bytes = readFileSync(warehouse);
  bytes.fill(0x2a, 0, 4096); // its header overwritten
  writeFileSync(warehouse, bytes);
  const refused = await perks('sql', 'SELECT 1');
  expect(stderrLines(refused)).toEqual([expect.stringMatching(/cannot be opened: .*; rebuild it with `perks build`$/)]);
  // the advice, followed
  const rebuilt = await perks('build', '--as-of', AS_OF, '--quiet');
  expect(rebuilt.code, rebuilt.stderr).toBe(4); // finished, with a warning
  expect(rebuilt.stdout).toMatch(
    /\n {2}the previous warehouse .*warehouse\.duckdb could not be read \(.*\): every model was built whole from the lake, and replaces it\n/,
  );
  expect((await perks('sql', 'SELECT * FROM revenue_monthly ORDER BY ALL', '--format', 'csv')).stdout).toBe(revenue);
  expect(readdirSync(outDir).filter((f) => f.includes('.tmp'))).toEqual([]);
});
