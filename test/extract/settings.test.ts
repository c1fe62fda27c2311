/**
 * The quarantine threshold and the per-user refresh interval (issue 4, gaps 2 and 4): a run above the
 * threshold says so (status partial, one line, the manifest) and exits 4; each setting has an
 * environment variable and a flag, and a bad value is one line and exit 2.
 */
import { describe, expect, test } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract, shiftDay } from '../../src/extract/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgConfig, orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { now, todayUtc } from '../../src/shared/clock.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = todayUtc();
const START = shiftDay(TODAY, -5);
const sandbox = sandboxForFile({ today: TODAY });

const env = (out: string, extra: Record<string, string> = {}) =>
  orgEnv(sandbox(), out, { PERKS_GROUP_IDS: '11,12', PERKS_START_DATE: START, ...extra });
const quarantineLines = (out: string) =>
  readdirSync(join(out, 'quarantine'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.jsonl') || f.endsWith('.json'))
    .reduce(
      (n, f) =>
        n +
        readFileSync(join(out, 'quarantine', f), 'utf8')
          .split('\n')
          .filter(Boolean).length,
      0,
    );

describe('the quarantine threshold', () => {
  test('at 5% drift the run quarantines more than 0.1%: it prints partial and the line naming the threshold, the manifest says it, exit 4', async () => {
    sandbox().setFaults({ driftRate: 0.05 });
    try {
      const out = tempOut();
      const r = await runCli(['extract', '--quiet'], env(out));
      expect(r.code, r.stderr).toBe(4);
      const manifest = JSON.parse(readFileSync(/manifest: (\S+)/.exec(r.stdout)![1], 'utf8'));
      const { quarantined, records } = manifest.quarantine;
      expect(quarantined).toBe(quarantineLines(out));
      expect(quarantined).toBeGreaterThan(0);
      const line = `quarantined ${quarantined} of ${records} records (${((quarantined / records) * 100).toFixed(1)}%), above the 0.1% threshold (PERKS_QUARANTINE_THRESHOLD)`;
      expect(r.stdout).toMatch(/^run \S+: partial\n/);
      expect(r.stdout).toContain(`\n  ${line}\n`);
      expect(stderrLines(r)).toEqual([`perks: ${line}`]);
      expect(manifest.status).toBe('partial');
      expect(manifest.exit_code).toBe(4);
      expect(manifest.quarantine).toEqual({ quarantined, records, threshold: 0.001, above: true, message: line });
      expect(records).toBe(
        manifest.streams.reduce((n: number, s: { rows: number; rejected: number }) => n + s.rows + s.rejected, 0),
      );

      // The same drift under a threshold of 50%, by flag and by environment: success, exit 0, no line.
      for (const [args, extra] of [
        [['--quarantine-threshold', '0.5'], {}],
        [[], { PERKS_QUARANTINE_THRESHOLD: '0.5' }],
      ] as const) {
        const again = await runCli(['extract', '--quiet', ...args], env(tempOut(), extra));
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toMatch(/^run \S+: success\n/);
        expect(again.stderr).toBe('');
      }
    } finally {
      sandbox().setFaults({ driftRate: 0 });
    }
  });
});

describe('the per-user refresh interval', () => {
  test('users refreshed 3 days ago are overdue with --refresh-days 2 or PERKS_REFRESH_DAYS=2, not by default (7) nor when the flag overrides the variable', async () => {
    const out = tempOut();
    const landed = await extract(orgConfig(sandbox(), out, { PERKS_GROUP_IDS: '11,12', PERKS_START_DATE: START }), {
      output: outputAt(out),
      now: new Date(now().getTime() - 3 * 86_400_000),
    });
    expect(landed.status).toBe('success');
    const users = landed.streams.find((s) => s.name === 'users')!.rows;
    /**
     * The users each per-user row of the plan ranks `rank`, summed over credit and interactions. (A user whose
     * credit item expired since the read ranks higher, as expiring: the refresh-days count them with the overdue.)
     */
    const ranked = async (rank: string, args: string[], extra: Record<string, string> = {}) => {
      const r = await runCli(['extract', '--plan', ...args], env(out, extra));
      expect(r.code, r.stderr).toBe(0);
      return [...r.stdout.matchAll(new RegExp(`${rank} (\\d+)/`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
    };
    const due = async (args: string[], extra: Record<string, string> = {}) =>
      (await ranked('overdue', args, extra)) + (await ranked('expiring', args, extra));
    expect(await ranked('overdue', [])).toBe(0);
    expect(await due(['--refresh-days', '2'])).toBe(2 * users);
    expect(await due([], { PERKS_REFRESH_DAYS: '2' })).toBe(2 * users);
    expect(await ranked('overdue', ['--refresh-days', '7'], { PERKS_REFRESH_DAYS: '2' })).toBe(0);
  });
});

describe('bad settings', () => {
  test.each([
    [
      ['--refresh-days', '0'],
      {},
      'perks: --refresh-days="0" is invalid: expected a whole number of days, 1 or more (default 7)',
    ],
    [
      ['--refresh-days', 'weekly'],
      {},
      'perks: --refresh-days="weekly" is invalid: expected a whole number of days, 1 or more (default 7)',
    ],
    [
      [],
      { PERKS_REFRESH_DAYS: '2.5' },
      'perks: PERKS_REFRESH_DAYS="2.5" is invalid: expected a whole number of days, 1 or more (default 7)',
    ],
    [
      ['--quarantine-threshold', '1.5'],
      {},
      'perks: --quarantine-threshold="1.5" is invalid: expected a fraction from 0 to 1, e.g. 0.001 for 0.1% (the default)',
    ],
    [
      [],
      { PERKS_QUARANTINE_THRESHOLD: '0.1%' },
      'perks: PERKS_QUARANTINE_THRESHOLD="0.1%" is invalid: expected a fraction from 0 to 1, e.g. 0.001 for 0.1% (the default)',
    ],
  ] as const)('perks extract %j with %j: one line, exit 2, no call made', async (args, extra, line) => {
    const before = sandbox().stats().callsByOperation.listGroups ?? 0;
    const r = await runCli(['extract', '--quiet', ...args], env(tempOut(), extra));
    expect(r.code, r.stderr).toBe(2);
    expect(stderrLines(r)).toEqual([line]);
    expect(sandbox().stats().callsByOperation.listGroups ?? 0).toBe(before);
  });
});
