/**
 * `perks run --month M` for a month the run's data cannot hold is refused before the first call (it used to be
 * judged by the report step, after a whole extract and build), and the advice it gives works when followed.
 */
import { expect, test } from 'vitest';
import { shiftDay } from '../../src/extract/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const sandbox = sandboxForFile({ seed: 12 });

const month = (day: string, add: number) => {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + add);
  return d.toISOString().slice(0, 7);
};

test('a month after the run’s day or before its data starts is refused before any call (exit 2, one line); the advice, followed, lets the run report it', async () => {
  const env = orgEnv(sandbox(), tempOut('perks-run-month-'));
  const today = sandbox().world.today;
  const calls = sandbox().stats().calls;
  const future = await runCli(['run', '--month', month(today, 2)], env);
  expect(future.code).toBe(2);
  expect(stderrLines(future)).toEqual([expect.stringMatching(/^perks: --month=\d{4}-\d{2} is after this run's day/)]);
  // a first run starts 90 days back: four months back is before it
  const early = month(shiftDay(today, -91), -1);
  const before = await runCli(['run', '--month', early], env);
  expect(before.code).toBe(2);
  expect(stderrLines(before)).toEqual([
    expect.stringMatching(
      new RegExp(
        `^perks: --month=${early} is before this run's data starts .*: extract it first with \`perks extract --start-date ${early}-01\``,
      ),
    ),
  ]);
  expect(sandbox().stats().calls - calls, 'refused before any API call').toBe(0);

  const extracted = await runCli(['extract', '--start-date', `${early}-01`, '--quiet'], env);
  expect(extracted.code, extracted.stderr).toBe(0);
  const run = await runCli(['run', '--month', early, '--no-writeback', '--quiet'], env, { timeoutMs: 240_000 });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(run.stdout).toMatch(new RegExp(`report .*${early}`));
}, 300_000);
