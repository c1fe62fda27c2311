/**
 * `perks close | reopen | closes` as a person runs them: one line on stderr and exit 2 for every refusal,
 * nothing written; the hash chain catches a tampered record.
 */
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { atInstant } from '../support/clock.js';
import { testSandbox } from '../support/sandbox.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { TODAY } from './scenario.js';
import { outputAt } from '../../src/output/index.js';

let sandbox: Sandbox;
let out: string;
let group: number;
const env = (dir: string, extra: Record<string, string> = {}) => ({
  PERKS_OUTPUT: dir,
  PERKS_NOW: `${TODAY}T12:00:00Z`,
  PERKS_OPERATOR: 'ci',
  ...extra,
});
const closes = (dir: string) => join(dir, 'closes', 'closes.jsonl');

async function extracted(now: string): Promise<string> {
  const dir = tempOut('perks-close-cli-');
  const r = await atInstant(now, () =>
    extract(orgConfig(sandbox, dir, { PERKS_START_DATE: '2026-09-01' }), {
      output: outputAt(dir),
      now: new Date(now),
      streams: ['orders'],
    }),
  );
  expect(r.status).toBe('success');
  const b = await buildWarehouse({ output: outputAt(dir), asOf: now.slice(0, 10) });
  expect(b.ok, b.error).toBe(true);
  return dir;
}

/** The Parquet files under `dir`, in name order. */
const lakeFiles = (dir: string): string[] =>
  (readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.parquet'))
    .sort()
    .map((f) => join(dir, f));

/** The last line of the close record. */
const lastRecord = (dir: string) => JSON.parse(readFileSync(closes(dir), 'utf8').trim().split('\n').at(-1)!);
/** The month's HTML report as `perks report` writes it (no group filter). */
const reportOf = (dir: string, ym: string) => readFileSync(join(dir, 'reports', `revenue-${ym}.html`), 'utf8');

/** October's close state of the group in the exported mart, one row per distinct state (UTC, ISO instants). */
async function octoberInMarts(dir: string) {
  const { query } = await import('../transform/helpers.js');
  const rows = await query(
    ':memory:',
    `SELECT DISTINCT is_closed, strftime(closed_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS closed_at, month_state
     FROM read_parquet('${join(dir, 'marts', 'revenue_monthly.parquet')}')
     WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'`,
  );
  return rows;
}

function refused(r: { code: number | null; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(stderrLines(r as never)).toHaveLength(1);
  expect(r.stderr).toMatch(message);
}

beforeAll(async () => {
  sandbox = await testSandbox({ today: TODAY });
  group = sandbox.world.groups[0].id;
  out = await extracted(`${TODAY}T12:00:00Z`);
}, 300_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('perks close, reopen and closes', () => {
  test('bad input is refused with one line, exit 2, and nothing written', async () => {
    refused(
      await runCli(['close', '--month', '2027-01', '--group', String(group)], env(out)),
      /^perks: --month=2027-01 is in the future \(today is 2026-11-22\)/,
    );
    refused(
      await runCli(['close', '--month', '2026-11', '--group', String(group)], env(out)),
      /^perks: --month=2026-11 is not over yet/,
    );
    refused(
      await runCli(['close', '--month', '2026-10', '--group', '99'], env(out)),
      /^perks: --group=99 is not in the warehouse; its groups are /,
    );
    refused(await runCli(['close', '--month', '2026-1O'], env(out)), /^perks: --month="2026-1O" is invalid/);
    refused(
      await runCli(['reopen', '--month', '2026-10', '--group', String(group), '--reason', 'typo'], env(out)),
      /^perks: 2026-10 is not closed for group \d+, so it cannot be reopened/,
    );
    // the rates the close would freeze: a malformed or cut-short file stops it before anything is read or written
    const rates = join(out, 'rates.csv');
    writeFileSync(rates, 'month,currency,rate\n2026-10,EUR,0.9\n2026-10,US');
    refused(
      await runCli(
        ['close', '--month', '2026-10', '--group', String(group)],
        env(out, { PERKS_FX_RATES: rates, PERKS_REPORTING_CURRENCY: 'GBP' }),
      ),
      /^perks: PERKS_FX_RATES=.* line 3: the file ends in the middle of a line/,
    );
    writeFileSync(rates, 'month,currency,rate\n2026-10,EUR,0.9\n');
    refused(
      await runCli(
        ['close', '--month', '2026-10', '--group', String(group)],
        env(out, { PERKS_FX_RATES: rates, PERKS_REPORTING_CURRENCY: 'pounds' }),
      ),
      /^perks: PERKS_REPORTING_CURRENCY="pounds" is invalid/,
    );
    expect(existsSync(closes(out))).toBe(false);
  }, 180_000);

  test('close, close twice, reopen only the latest closed month, and the record lists and verifies', async () => {
    const g = String(group);
    const sep = await runCli(['close', '--month', '2026-09', '--group', g, '--note', 'Q3'], env(out));
    expect(sep.code, sep.stderr).toBe(0);
    expect(sep.stdout).toMatch(
      new RegExp(
        `^2026-09 not re-read before the close: no API configured \\(PERKS_BASE_URL\\)\\nclosed 2026-09 for group ${g}, record 1, hash [0-9a-f]{64}\\n`,
      ),
    );
    const oct = await runCli(['close', '--month', '2026-10', '--group', g], env(out));
    expect(oct.code, oct.stderr).toBe(0);
    // the marts and the month's report say so at once, without a build or a report of their own
    const closedOct = lastRecord(out);
    expect(oct.stdout).toContain(`\nreport ${join(out, 'reports', 'revenue-2026-10.html')}\n`);
    expect(await octoberInMarts(out)).toEqual([
      { is_closed: true, closed_at: closedOct.at, month_state: 'signed_off' },
    ]);
    expect(reportOf(out, '2026-10')).toContain(closedOct.hash);
    const before = readFileSync(closes(out), 'utf8');
    refused(
      await runCli(['close', '--month', '2026-10', '--group', g], env(out)),
      /^perks: 2026-10 is already closed for group \d+ \(by ci at 2026-11-22T12:00:\d\d\.\d{3}Z, record 2\): reopen it first/,
    );
    refused(
      await runCli(['reopen', '--month', '2026-09', '--group', g, '--reason', 'typo'], env(out)),
      /^perks: 2026-09 is not group \d+'s latest closed month \(2026-10 is closed after it\): reopen 2026-10 first\n/,
    );
    expect(readFileSync(closes(out), 'utf8')).toBe(before);
    const reopened = await runCli(['reopen', '--month', '2026-10', '--group', g, '--reason', 'late invoice'], env(out));
    expect(reopened.code, reopened.stderr).toBe(0);
    expect(reopened.stdout).toContain(`\nreport ${join(out, 'reports', 'revenue-2026-10.html')}\n`);
    expect(await octoberInMarts(out)).toEqual([{ is_closed: false, closed_at: null, month_state: 'final' }]);
    expect(reportOf(out, '2026-10')).not.toContain(closedOct.hash);
    const list = await runCli(['closes'], env(out));
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^ {3}1  close   group ${g}  2026-09  2026-11-22T12:00:\\d\\d\\.\\d{3}Z  by ci  "Q3"  [0-9a-f]{12}$`,
        ),
      ),
      expect.stringMatching(new RegExp(`^ {3}2  close   group ${g}  2026-10 `)),
      expect.stringMatching(new RegExp(`^ {3}3  reopen  group ${g}  2026-10 .* "late invoice" `)),
      expect.stringMatching(/^3 records, hash chain verified \(last [0-9a-f]{64}\)$/),
    ]);
    // October is open again: it can be closed anew.
    expect((await runCli(['close', '--month', '2026-10', '--group', g], env(out))).code).toBe(0);
  }, 180_000);

  test('a tampered record: the hash chain says which line, and nothing is written', async () => {
    const dir = tempOut('perks-close-tamper-');
    // a copy of the record with one frozen figure changed
    const lines = readFileSync(closes(out), 'utf8').split('\n').filter(Boolean);
    const first = JSON.parse(lines[0]);
    first.figures.section.currencies[0].current.group_revenue = '999999.99';
    const tampered = [JSON.stringify(first), ...lines.slice(1)].join('\n') + '\n';
    const { mkdirSync } = await import('node:fs');
    cpSync(out, dir, { recursive: true });
    mkdirSync(join(dir, 'closes'), { recursive: true });
    writeFileSync(closes(dir), tampered);
    refused(
      await runCli(['closes'], env(dir)),
      /^perks: the close record does not verify: .*closes\.jsonl line 1 has a hash that does not match its content; .*restore it from a backup/,
    );
    refused(
      await runCli(['close', '--month', '2026-09', '--group', String(group)], env(dir)),
      /line 1 has a hash that does not match/,
    );
    refused(
      await runCli(['report', 'revenue', '--month', '2026-09', '--group', String(group)], env(dir)),
      /line 1 has a hash that does not match/,
    );
    expect(readFileSync(closes(dir), 'utf8')).toBe(tampered);
    // a line removed: the next one no longer follows
    writeFileSync(closes(dir), [lines[0], ...lines.slice(2)].join('\n') + '\n');
    refused(await runCli(['closes'], env(dir)), /line 2 has seq 3, expected 2/);
  }, 180_000);

  test('a rebuild that fails after the record is written: the record stands, one line says what to run, and running it makes the marts true', async () => {
    const dir = tempOut('perks-close-rebuild-');
    cpSync(out, dir, { recursive: true });
    // a lake file the build cannot read (the close itself reads the warehouse, not the lake)
    const file = lakeFiles(join(dir, 'lake', 'orders'))[0];
    const whole = readFileSync(file);
    writeFileSync(file, whole.subarray(0, 100));
    const r = await runCli(
      ['reopen', '--month', '2026-10', '--group', String(group), '--reason', 'late invoice'],
      env(dir),
    );
    expect(r.code, r.stderr).toBe(1);
    expect(stderrLines(r as never)).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^perks: 2026-10 is reopened \(record \d+\), but the marts and the report still show the month as before: the build failed: .+; run `perks build` then `perks report revenue --month 2026-10` once it is fixed\n$/,
    );
    expect(lastRecord(dir).action).toBe('reopen');
    expect(await octoberInMarts(dir)).toEqual([expect.objectContaining({ is_closed: true })]);
    // the advice followed, once the file is whole again
    writeFileSync(file, whole);
    expect((await runCli(['build'], env(dir))).code).toBe(0);
    expect((await runCli(['report', 'revenue', '--month', '2026-10'], env(dir))).code).toBe(0);
    expect(await octoberInMarts(dir)).toEqual([{ is_closed: false, closed_at: null, month_state: 'final' }]);
    expect(reportOf(dir, '2026-10')).not.toContain(lastRecord(out).hash);
  }, 180_000);

  test('a provisional month is refused, and --force closes it with the record saying so', async () => {
    const early = await extracted('2026-11-05T12:00:00Z');
    refused(
      await runCli(['close', '--month', '2026-10', '--group', String(group)], env(early)),
      /^perks: 2026-10 is provisional for group \d+: group \d+ is extracted to 2026-11-04; .*pass --force/,
    );
    expect(existsSync(closes(early))).toBe(false);
    const forced = await runCli(['close', '--month', '2026-10', '--group', String(group), '--force'], env(early));
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('(FORCED: the month was provisional)');
    expect(JSON.parse(readFileSync(closes(early), 'utf8')).forced).toBe(true);
  }, 300_000);
});

describe('closing first re-reads the month', () => {
  test('a refund that came weeks late is found by the re-read and is in the signed figures, not an adjustment', async () => {
    const { orgEnv } = await import('../support/sandbox.js');
    const { query } = await import('../transform/helpers.js');
    const { octoberCompleteOrders } = await import('./scenario.js');
    const dir = await extracted(`${TODAY}T12:00:00Z`);
    const [i] = octoberCompleteOrders(sandbox, group, 1, 30);
    sandbox.world.orders.setStatus(i, 'Refunded');
    const r = await runCli(['close', '--month', '2026-10', '--group', String(group)], {
      ...orgEnv(sandbox, dir),
      PERKS_OPERATOR: 'ci',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^re-read 2026-10 for group ${group} \\(31 windows, \\d+ calls\\), the lake before → the API now:\\n  group ${group} \\(31 days re-read\\): 0 new, 1 changed, 0 removed\\n`,
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `\\n  group ${group} order ${700_001 + i}: Complete → Refunded \\(group revenue [\\d.]+ \\w+ → [\\d.]+ \\w+\\)\\n`,
      ),
    );
    const record = JSON.parse(readFileSync(closes(dir), 'utf8'));
    expect(record.figures.reread).toMatchObject({ changed: 1, new: 0, removed: 0, windows: 31 });
    const [refunded] = await query(
      join(dir, 'warehouse.duckdb'),
      `SELECT order_status FROM stg_orders WHERE order_id = ${700_001 + i}`,
    );
    expect(refunded.order_status).toBe('Refunded');
    const [adjustments] = await query(join(dir, 'warehouse.duckdb'), 'SELECT count(*) AS n FROM revenue_adjustments');
    expect(adjustments.n).toBe('0');
    // without an API, the close says it did not re-read
    const offline = await runCli(['close', '--month', '2026-09', '--group', String(group)], env(dir));
    expect(offline.stdout).toMatch(/^2026-09 not re-read before the close: no API configured \(PERKS_BASE_URL\)\n/);
  }, 300_000);
});
