/**
 * `perks close` first refreshes the credit of the month's holders (a balance, or credit spent in the month), so
 * the liability signed rests on balances read after the month end; past its budget it names the stale balances
 * and refuses, unless --force (the record says so).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { creditOf } from '../../src/sandbox/world/credit.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgConfig, orgEnv, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

const READ_DAY = '2026-10-20';
const MONTH_END = Date.parse('2026-10-31T23:59:59.999Z');
const cents = (money: string | number | boolean | null) => Math.round(Number(money) * 100);

test('a close refreshes the credit of the month’s holders first; past its budget it names the stale balances and refuses, and --force closes on them', async () => {
  await withSandbox({ today: READ_DAY }, async (sandbox) => {
    const out = tempOut('perks-close-credit-');
    const [group, other] = sandbox.credentials.organisation.organisation_group_ids;
    const config = (day: string) =>
      orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01', PERKS_NOW: `${day}T12:00:00Z` });
    // Credit read on 20 October; the orders run daily until 10 November (October is past its lookback).
    const first = await extract(config(READ_DAY), {
      output: outputAt(out),
      now: new Date(`${READ_DAY}T12:00:00Z`),
      streams: ['orders', 'credit'],
    });
    expect(first.status).toBe('success');
    sandbox.advance(21);
    const today = sandbox.world.today;
    const daily = await extract(config(today), {
      output: outputAt(out),
      now: new Date(`${today}T12:00:00Z`),
      streams: ['orders'],
    });
    expect(daily.status).toBe('success');
    expect((await buildWarehouse({ output: outputAt(out), asOf: today })).ok).toBe(true);
    const env = { ...orgEnv(sandbox, out), PERKS_OPERATOR: 'ci' };
    const close = (g: number, ...flags: string[]) =>
      runCli(['close', '--month', '2026-10', '--group', String(g), ...flags], env);

    // A budget of 10 calls (0.0001 min at 100,000 calls/min) reaches some holders: the rest stay stale.
    const tight = await close(group, '--budget-minutes', '0.0001');
    expect(tight.code, tight.stdout).toBe(2);
    const [line] = stderrLines(tight);
    expect(line).toMatch(
      new RegExp(
        `^perks: 2026-10 cannot be signed off yet for group ${group}: \\d+ credit balances older than the month end \\(read before 2026-10-31, the oldest on ${READ_DAY}\\).*--budget-minutes, or pass --force`,
      ),
    );
    expect(existsSync(join(out, 'closes', 'closes.jsonl'))).toBe(false);

    // The same tight budget with --force closes on them; the record says so.
    const forced = await close(other, '--budget-minutes', '0.0001', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(
      /credit refreshed for \d+ of \d+ holders .*, [1-9]\d* waiting: the budget \(10 calls/,
    );
    expect(forced.stdout).toMatch(/FORCED: .*\d+ credit balances? read before the month end/);
    const [record] = readFileSync(join(out, 'closes', 'closes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(record).toMatchObject({ organisation_group_id: other, forced: true });
    expect(Number(record.figures.section.credit.staleBalances)).toBeGreaterThan(0);

    // The whole budget: every holder is read again, none is stale, and the liability is the platform's at the month end.
    const full = await close(group);
    expect(full.code, full.stderr).toBe(0);
    const [, holders] = /credit refreshed for (\d+) of (\d+) holders/.exec(full.stdout)!;
    expect(full.stdout).toContain(`credit refreshed for ${holders} of ${holders} holders`);
    expect(full.stdout).not.toContain('FORCED');
    const wh = join(out, 'warehouse.duckdb');
    const [row] = await query(
      wh,
      `SELECT stale_balances, credit_available, strftime(oldest_snapshot_date, '%Y-%m-%d') AS oldest FROM credit_liability_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'`,
    );
    expect(row.stale_balances).toBe('0');
    const after = await query(
      wh,
      `SELECT DISTINCT user_id AS u FROM lake_credit WHERE organisation_group_id = ${group} AND _snapshot_date > DATE '2026-10-31'`,
    );
    const truth = after.reduce((n, { u }) => {
      const user = sandbox.world.users.find(group, 'id', String(u))!;
      return n + creditOf(sandbox.world.seed, user, MONTH_END).available;
    }, 0);
    expect(cents(row.credit_available)).toBe(truth);

    // The report states the oldest balance the liability rests on.
    const report = await writeRevenueReport({
      settings: configFrom(),
      output: outputAt(out),
      month: '2026-10',
      group,
      formats: ['md'],
      revenueRule: { statuses: ['Complete'] },
    });
    const md = readFileSync(report.files[0], 'utf8');
    expect(md).toContain(
      `The oldest balance this liability rests on was read on ${row.oldest}; every balance held was read on 2026-10-31 or later`,
    );
  });
}, 180_000);
