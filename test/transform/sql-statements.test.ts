/**
 * `perks sql` takes every single statement DuckDB takes as a read (PIVOT without an IN list, UNPIVOT,
 * FROM-first, SUMMARIZE, DESCRIBE, WITH … PIVOT), keeps DuckDB's "Did you mean" hint, and still refuses
 * what writes, whatever shape it takes. The CLI as a user runs it, on a built warehouse.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildWarehouse } from '../../src/transform/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
const perks = (...args: string[]) => runCli(args, { PERKS_OUTPUT: outDir });
const json = async (sql: string) => {
  const r = await perks('sql', sql, '--format', 'json');
  expect(r.stderr, sql).toBe('');
  expect(r.code, sql).toBe(0);
  return JSON.parse(r.stdout) as Record<string, string | number | null>[];
};

beforeAll(async () => {
  outDir = await writeFixtureLake();
  expect((await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF })).ok).toBe(true);
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** month → currency → revenue, from the plain GROUP BY: what every pivot must show. */
async function revenueByMonth(): Promise<Record<string, Record<string, string>>> {
  const rows = await json(
    'SELECT month, order_currency, sum(group_revenue) AS revenue FROM revenue_monthly GROUP BY ALL ORDER BY ALL',
  );
  const byMonth: Record<string, Record<string, string>> = {};
  for (const r of rows) (byMonth[String(r.month)] ??= {})[String(r.order_currency)] = String(r.revenue);
  return byMonth;
}

/** The pivot's rows in the same shape (a currency without revenue in a month is null there: left out). */
function pivoted(rows: Record<string, string | number | null>[]): Record<string, Record<string, string>> {
  const byMonth: Record<string, Record<string, string>> = {};
  for (const { month, ...currencies } of rows)
    byMonth[String(month)] = Object.fromEntries(
      Object.entries(currencies)
        .filter(([, v]) => v !== null)
        .map(([c, v]) => [c, String(v)]),
    );
  return byMonth;
}

test('a PIVOT without an IN list gives the GROUP BY figures, alone, after WITH, and written as Parquet', async () => {
  const expected = await revenueByMonth();
  expect(Object.keys(expected).length).toBeGreaterThan(1);
  expect(new Set(Object.values(expected).flatMap(Object.keys))).toEqual(new Set(['EUR', 'GBP', 'USD']));
  const pivot = 'PIVOT revenue_monthly ON order_currency USING sum(group_revenue) GROUP BY month ORDER BY month';
  expect(pivoted(await json(pivot))).toEqual(expected);
  expect(pivoted(await json(`${pivot};`))).toEqual(expected);
  const withPivot =
    'WITH r AS (FROM revenue_monthly SELECT month, order_currency, group_revenue) PIVOT r ON order_currency USING sum(group_revenue) GROUP BY month ORDER BY month';
  expect(pivoted(await json(withPivot))).toEqual(expected);
  expect(pivoted(await json(`FROM (${pivot}) ORDER BY month`))).toEqual(expected);

  const file = join(outDir, 'pivot.parquet');
  const written = await perks('sql', pivot, '--format', 'parquet', '--out', file);
  expect(written.stderr).toBe('');
  expect(written.stdout).toBe(`${Object.keys(expected).length} rows written to ${file} (parquet)\n`);
  const back = await query(':memory:', `FROM read_parquet('${file}') ORDER BY month`);
  expect(pivoted(back.map((r) => ({ ...r, month: String(r.month) })) as never)).toEqual(expected);
  rmSync(file);
});

test('UNPIVOT, FROM-first, SUMMARIZE, DESCRIBE and a PIVOT with an IN list read as DuckDB reads them', async () => {
  const [total] = await json('SELECT sum(face_value + group_revenue) AS total FROM revenue_monthly');
  const [unpivotTotal] = await json(
    'WITH u AS (UNPIVOT revenue_monthly ON face_value, group_revenue INTO NAME measure VALUE amount) SELECT sum(amount) AS total FROM u',
  );
  expect(unpivotTotal.total).toBe(total.total);
  const measures = await json(
    'UNPIVOT (FROM revenue_monthly SELECT face_value, group_revenue) ON COLUMNS(*) INTO NAME measure VALUE amount',
  );
  expect(new Set(measures.map((m) => m.measure))).toEqual(new Set(['face_value', 'group_revenue']));

  const fromFirst = await json('FROM revenue_monthly SELECT DISTINCT order_currency ORDER BY 1');
  expect(fromFirst.map((r) => r.order_currency)).toEqual(['EUR', 'GBP', 'USD']);

  const summary = await json('SUMMARIZE revenue_monthly');
  expect(summary.map((r) => r.column_name)).toContain('group_revenue');
  const described = await json('DESCRIBE revenue_monthly');
  expect(described.find((r) => r.column_name === 'group_revenue')?.column_type).toBe('DECIMAL(38,2)');

  const inList = await json(
    "PIVOT revenue_monthly ON order_currency IN ('GBP', 'USD') USING sum(group_revenue) GROUP BY month ORDER BY month",
  );
  expect(Object.keys(inList[0])).toEqual(['month', 'GBP', 'USD']);
});

test('a misspelt table keeps DuckDB\'s "Did you mean" on the one line, then the caret under it, exit 2', async () => {
  const r = await perks('sql', 'SELECT * FROM revenue_monthy');
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    [
      'perks: the query failed: Catalog Error: Table with name revenue_monthy does not exist! Did you mean "revenue_monthly"?',
      'LINE 1: SELECT * FROM revenue_monthy',
      `${' '.repeat('LINE 1: SELECT * FROM '.length)}^`,
      '',
    ].join('\n'),
  );
  const pivot = await perks('sql', 'PIVOT revenue_monthy ON order_currency USING sum(group_revenue)');
  expect(pivot.code).toBe(2);
  expect(stderrLines(pivot)[0]).toMatch(/Did you mean "revenue_monthly"\?$/);
});

test("a misspelt column keeps DuckDB's whole message: the candidate columns, and the caret under the word on its line", async () => {
  const sql = 'SELECT month,\n  montth\nFROM revenue_monthly';
  const r = await perks('sql', sql);
  expect(r.code).toBe(2);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines[0]).toBe('perks: the query failed: Binder Error: Referenced column "montth" not found in FROM clause!');
  // the candidates are the mart's own columns, closest first: month among them
  const candidates = lines.find((l) => l.startsWith('Candidate bindings: '));
  expect(candidates).toMatch(/^Candidate bindings: "month"(, "[a-z_]+")+$/);
  const described = await query(join(outDir, 'warehouse.duckdb'), 'DESCRIBE revenue_monthly');
  const columns = described.map((c) => String(c.column_name));
  for (const c of candidates!.matchAll(/"([a-z_]+)"/g)) expect(columns).toContain(c[1]);
  // the query's second line, and a caret under the misspelt word
  const at = lines.findIndex((l) => l.startsWith('LINE 2: '));
  expect(lines[at]).toBe('LINE 2:   montth');
  expect(lines[at + 1]).toBe(`${' '.repeat(lines[at].indexOf('montth'))}^`);
});

test('- reads the query from stdin; an empty stdin is refused, exit 2', async () => {
  const piped = await runCli(
    ['sql', '-', '--format', 'csv'],
    { PERKS_OUTPUT: outDir },
    { stdin: "SELECT 'it''s' AS a;\n" },
  );
  expect(piped.stderr).toBe('');
  expect(piped.code).toBe(0);
  expect(piped.stdout).toBe("a\nit's\n");
  const before = await runCli(['sql', '--format', 'json', '-'], { PERKS_OUTPUT: outDir }, { stdin: 'SELECT 2 AS b' });
  expect(JSON.parse(before.stdout)).toEqual([{ b: 2 }]);
  const empty = await runCli(['sql', '-'], { PERKS_OUTPUT: outDir }, { stdin: '  \n' });
  expect(empty.code).toBe(2);
  expect(stderrLines(empty)).toEqual([
    'perks: stdin (`-`) held no query: pipe one SQL statement into it, e.g. `perks sql - < query.sql`',
  ]);
});

test('several statements are refused, not run with all but the last result dropped: one line, exit 2', async () => {
  for (const sql of ['SELECT 1 AS a; SELECT 2 AS b', 'EXPLAIN SELECT 1;\nSELECT 2;']) {
    const r = await perks('sql', sql, '--format', 'csv');
    expect(r.code, sql).toBe(2);
    expect(r.stdout, sql).toBe('');
    expect(stderrLines(r), sql).toEqual([
      'perks: the query has 2 statements, and perks sql runs one and shows its result: run them one at a time (a trailing ";" is fine)',
    ]);
  }
  // one statement with a trailing ";", or a ";" inside a string, is one statement
  expect(await json("SELECT ';' AS s;")).toEqual([{ s: ';' }]);
});

test('what writes is still refused, PIVOT or not, with one line and exit 2, and leaves no file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perks-sql-pivot-'));
  const at = (name: string) => join(dir, name);
  const pivot = 'PIVOT revenue_monthly ON order_currency USING sum(group_revenue) GROUP BY month';
  const attempts: [string, RegExp][] = [
    [`${pivot}; DROP TABLE stg_orders`, /DROP is refused/],
    [`DROP TABLE stg_orders; ${pivot}`, /DROP is refused/],
    [`CREATE TABLE p AS ${pivot}`, /CREATE is refused/],
    [`CREATE TEMP TYPE e AS ENUM ('a')`, /CREATE is refused/],
    [`COPY (${pivot}) TO '${at('p.csv')}'`, /COPY is refused/],
    [`/* PIVOT */ EXPORT DATABASE '${at('exp')}'`, /EXPORT is refused/],
    [`SELECT json_serialize_plan('EXPORT DATABASE ''${at('plan')}''')`, /json_serialize_plan\(\) is refused/],
    [
      `PIVOT (FROM revenue_monthly, enable_logging(storage='file', storage_config={'path': '${at('log')}'})) ON order_currency USING sum(group_revenue)`,
      /enable_logging\(\) is refused/,
    ],
    [`PIVOT (FROM query('FROM revenue_monthly')) ON order_currency USING sum(group_revenue)`, /query\(\) is refused/],
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
  expect(existsSync(join(outDir, 'exp'))).toBe(false);
});

test('a PIVOT without an IN list in company, or under EXPLAIN, is refused with what to do instead', async () => {
  const pivot = 'PIVOT revenue_monthly ON order_currency USING sum(group_revenue) GROUP BY month';
  for (const sql of [`EXPLAIN ${pivot}`, `SELECT 1; ${pivot}`, `${pivot}; SELECT 1`]) {
    const r = await perks('sql', sql);
    expect(r.code, sql).toBe(2);
    expect(stderrLines(r), sql).toEqual([
      "perks: a PIVOT without an IN list must be the query's only statement, without EXPLAIN (DuckDB runs it in two steps): run it alone, or name its values, e.g. ON order_currency IN ('EUR', 'GBP')",
    ]);
  }
  // the advice followed: the values named, it runs under EXPLAIN (in company it is one of several statements)
  const named =
    "PIVOT revenue_monthly ON order_currency IN ('EUR', 'GBP', 'USD') USING sum(group_revenue) GROUP BY month";
  const explained = await perks('sql', `EXPLAIN ${named}`, '--format', 'csv');
  expect(explained.stderr).toBe('');
  expect(explained.code).toBe(0);
  const company = await perks('sql', `SELECT 1; ${named}`, '--format', 'csv');
  expect(company.code).toBe(2);
  expect(stderrLines(company)).toEqual([expect.stringMatching(/^perks: the query has 2 statements/)]);
});
