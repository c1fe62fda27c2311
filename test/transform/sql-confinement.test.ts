/** `perks sql` reads files in the output directory only, unless the analyst passes --read-files-anywhere. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { buildWarehouse, queryWarehouse } from '../../src/transform/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
let elsewhere: string;

beforeAll(async () => {
  outDir = await writeFixtureLake();
  expect((await buildWarehouse({ output: outputAt(outDir), asOf: AS_OF })).ok).toBe(true);
  elsewhere = mkdtempSync(join(tmpdir(), 'perks-elsewhere-'));
  writeFileSync(join(elsewhere, 'secret.csv'), 'a\nsomeone else\n');
});
afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

const q = (sql: string, filesAnywhere?: boolean) => queryWarehouse(outputAt(outDir).warehouse, sql, { filesAnywhere });

test.each([
  ["SELECT * FROM read_text('/etc/passwd')", '/etc/passwd'],
  ["SELECT * FROM glob('/root/*')", '/root/*'],
  ['SELECT * FROM read_csv($$ELSEWHERE/secret.csv$$)', 'secret.csv'],
  ["SELECT * FROM read_text('lake/../../../../etc/passwd')", 'etc/passwd'],
])('a query reading outside the output directory is refused with one line naming the flag: %s', async (sql, named) => {
  const err = await q(sql.replace('ELSEWHERE', elsewhere)).then(
    () => undefined,
    (e: unknown) => e as { message: string; exitCode: number },
  );
  expect(err?.exitCode).toBe(ExitCode.config);
  expect(err?.message).toMatch(
    /^the query reads a file outside the output directory, which is refused .*; pass --read-files-anywhere to read files elsewhere$/,
  );
  expect(err?.message).toContain(named);
});

test('the lake views, the marts and relative lake paths still read, wherever the process runs', async () => {
  const cwd = process.cwd();
  process.chdir(tmpdir());
  try {
    expect((await q('SELECT count(*)::INTEGER AS n FROM lake_orders')).rows).toEqual([{ n: 10 }]);
    expect((await q("SELECT count(*)::INTEGER AS n FROM read_parquet('lake/orders/**/*.parquet')")).rows).toEqual([
      { n: 10 },
    ]);
    expect(
      (
        await q(
          `SELECT count(*)::INTEGER AS n FROM read_parquet('${join(outDir, 'marts', 'revenue_monthly.parquet')}')`,
        )
      ).rows[0].n,
    ).toBeGreaterThan(0);
  } finally {
    process.chdir(cwd);
  }
});

test('--read-files-anywhere lets an analyst read a file elsewhere', async () => {
  expect((await q(`SELECT a FROM read_csv('${join(elsewhere, 'secret.csv')}')`, true)).rows).toEqual([
    { a: 'someone else' },
  ]);
  const r = await runCli(
    [
      'sql',
      `SELECT count(*) AS n FROM read_csv('${join(elsewhere, 'secret.csv')}')`,
      '--format',
      'csv',
      '--read-files-anywhere',
    ],
    { PERKS_OUTPUT: outDir },
  );
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('n\n1\n');
});

test('perks sql: a refused file, an empty query, a damaged lake file, a damaged warehouse: one line each, and the code of each kind', async () => {
  const refused = await runCli(['sql', "SELECT * FROM read_text('/etc/passwd')"], { PERKS_OUTPUT: outDir });
  expect(refused.code).toBe(ExitCode.config);
  expect(stderrLines(refused)).toEqual([
    expect.stringMatching(/^perks: the query reads a file outside the output directory.*--read-files-anywhere/),
  ]);
  const empty = await runCli(['sql', ''], { PERKS_OUTPUT: outDir });
  expect(empty.code).toBe(ExitCode.config);
  expect(stderrLines(empty)).toEqual([
    'perks: the query is empty: give one SQL statement, e.g. "SELECT * FROM revenue_monthly"',
  ]);
  // corrupt data is a failure (exit 1), not bad input
  const damaged = mkdtempSync(join(tmpdir(), 'perks-damaged-'));
  try {
    await writeFixtureLake(damaged);
    expect((await buildWarehouse({ output: outputAt(damaged), asOf: AS_OF })).ok).toBe(true);
    writeFileSync(
      join(damaged, 'lake', 'orders', 'organisation_group_id=11', 'order_date=2026-03-31', 'part-0.parquet'),
      'garbage!garbage!',
    );
    const lake = await runCli(['sql', 'SELECT count(*) FROM lake_orders'], { PERKS_OUTPUT: damaged });
    expect(lake.code).toBe(ExitCode.failed);
    expect(stderrLines(lake)).toEqual([
      expect.stringMatching(/^perks: the query could not read its data: .*part-0\.parquet/),
    ]);
    // the repair is named in the output of the query under way (passed down, no module state)
    expect(lake.stderr).toContain(
      `; damaged: ${join(damaged, 'lake', 'orders')}/organisation_group_id=11/order_date=2026-03-31/part-0.parquet; repair: perks extract --streams orders --groups 11`,
    );
    writeFileSync(outputAt(damaged).warehouse, 'not a database, not at all: garbage garbage garbage');
    for (const args of [
      ['sql', 'SELECT 1'],
      ['report', 'revenue', '--month', '2026-03'],
    ]) {
      const r = await runCli(args, { PERKS_OUTPUT: damaged });
      expect(r.code, args[0]).toBe(ExitCode.failed);
      expect(stderrLines(r), args[0]).toEqual([
        expect.stringMatching(/warehouse .* (cannot be opened|read-only): .*perks build/),
      ]);
    }
  } finally {
    rmSync(damaged, { recursive: true, force: true });
  }
});
