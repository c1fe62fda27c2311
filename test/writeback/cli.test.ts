import { describe, expect, test } from 'vitest';
import { now } from '../../src/shared/clock.js';
import { runWriteback } from '../../src/writeback/index.js';
import { runCli } from '../support/cli.js';
import { sandboxEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import {
  configFor,
  martsFromSandbox,
  sandboxPerTest,
  storedTotal,
  writeMarts,
  writePendingJournal,
} from './fixtures.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxPerTest();
/** `perks …` with this process's environment and `env` over it. */
const perks = (args: string[], env: Record<string, string>) => runCli(args, env, { inheritEnv: true });

describe('the perks writeback command', () => {
  test('--dry-run prints counts per type and the first rows, sends nothing, and never prints the secret', async () => {
    const outDir = tempOut();
    await writeMarts(outDir, martsFromSandbox(sandbox()));
    const env = sandboxEnv(sandbox(), outDir);
    const r = await perks(['writeback', '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/writeback dry run: \d+ rows from the models, \d+ to send.*nothing sent/);
    expect(r.stdout).toMatch(/segment_change\s+segment_change\s+\d+\s+\d+/);
    expect(r.stdout).toMatch(/first 10 rows:\n {2}\d+ {2}group \d+ {2}id=\d+/);
    expect(r.stdout + r.stderr).not.toContain(env.PERKS_CLIENT_SECRET);
    expect(sandbox().stats().calls).toBe(0);
  });

  test('rows the platform rejects make the exit status 4, after the others are sent', async () => {
    const outDir = tempOut();
    const marts = martsFromSandbox(sandbox());
    marts.users.push({ organisation_group_id: 11, user_id: 987_654_321, segment: 'active' });
    await writeMarts(outDir, marts);
    const r = await perks(['writeback'], sandboxEnv(sandbox(), outDir));
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toMatch(/partial: \d+ sent, 1 rejected/);
    expect(r.stdout).toMatch(/rejected \d+ \(segment_change, user 987654321\): .*HTTP 404/);
    expect(storedTotal(sandbox())).toBe(marts.users.length - 1 + marts.savings.length / 2);
  });

  test('a bad --limit or PERKS_WRITEBACK_TYPES is one line and exit status 2', async () => {
    const outDir = tempOut();
    const env = sandboxEnv(sandbox(), outDir);
    const limit = await perks(['writeback', '--limit', '-3'], env);
    expect(limit.code).toBe(2);
    expect(limit.stderr.trim().split('\n')).toEqual([
      'perks: --limit=-3 is invalid: expected a whole number of rows, 0 or more',
    ]);
    const types = await perks(['writeback', '--dry-run'], { ...env, PERKS_WRITEBACK_TYPES: 'segment_change' });
    expect(types.code).toBe(2);
    expect(types.stderr).toMatch(/^perks: PERKS_WRITEBACK_TYPES="segment_change" is invalid: expected kind=type pairs/);
  });

  test('a pending row of a user unknown upstream: exit 4, the row named, the others sent; the operator then settles it and the exit is 0', async () => {
    const outDir = tempOut();
    const marts = martsFromSandbox(sandbox());
    marts.users.push({ organisation_group_id: 11, user_id: 987_654_321, segment: 'active' });
    await writeMarts(outDir, marts);
    const rows = (
      await runWriteback({
        output: outputAt(outDir),
        config: configFor(sandbox(), outDir),
        dryRun: true,
        previewRows: 100_000,
      })
    ).preview;
    const unknown = rows.find((r) => r.identifier_value === '987654321')!;
    // a minute older than the command's start (its clock starts at this process's instant): past the grace period
    const start = now();
    writePendingJournal(outDir, [unknown], '', new Date(start.getTime() - 60_000));
    const env = { ...sandboxEnv(sandbox(), outDir), PERKS_WRITEBACK_TYPES: '', PERKS_NOW: start.toISOString() };
    const r = await perks(['writeback'], env);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toMatch(
      new RegExp(`partial: ${rows.length - 1} sent, 0 rejected, .*1 pending unresolved \\(left pending\\)`),
    );
    expect(r.stdout).toContain(
      `unresolved pending ${unknown.interaction_id} (segment_change, user 987654321): cannot tell whether it was stored`,
    );
    expect(r.stdout).toContain('--settle-pending-as-rejected <ids>');
    const bad = await perks(['writeback', '--settle-pending-as-rejected', 'all'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'perks: --settle-pending-as-rejected="all" is invalid: expected interaction ids separated by commas',
    ]);
    const settled = await perks(['writeback', '--settle-pending-as-rejected', String(unknown.interaction_id)], env);
    expect(settled.code, settled.stderr).toBe(0);
    expect(settled.stdout).toMatch(/success: 0 sent, .*1 pending settled as rejected/);
  });

  test('PERKS_WRITEBACK_LIMIT caps a run, --limit wins over it, and a bad value is one line and exit status 2', async () => {
    const outDir = tempOut();
    await writeMarts(outDir, martsFromSandbox(sandbox()));
    const env = { ...sandboxEnv(sandbox(), outDir), PERKS_WRITEBACK_LIMIT: '2' };
    const capped = await perks(['writeback'], env);
    expect(capped.code, capped.stderr).toBe(0);
    expect(capped.stdout).toMatch(/success: 2 sent, .*left for the next run \(--limit\)/);
    const flagged = await perks(['writeback', '--limit', '3'], env);
    expect(flagged.stdout).toMatch(/success: 3 sent, 0 rejected, 2 already sent/);
    expect(storedTotal(sandbox())).toBe(5);
    const bad = await perks(['writeback', '--dry-run'], { ...env, PERKS_WRITEBACK_LIMIT: 'lots' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'perks: PERKS_WRITEBACK_LIMIT="lots" is invalid: expected a whole number of rows, 0 or more',
    ]);
  });

  test('--verify without credentials exits 4 when some sent rows could not be checked, and says so', async () => {
    const outDir = tempOut();
    await writeMarts(outDir, martsFromSandbox(sandbox()));
    const sent = await runWriteback({ output: outputAt(outDir), config: configFor(sandbox(), outDir) });
    expect(sent.sent).toBeGreaterThan(0);
    // no interactions landed since, and no credentials: nothing can be checked
    const clean = Object.fromEntries(
      Object.entries(sandboxEnv(sandbox(), outDir)).filter(
        ([k]) => !['PERKS_CLIENT_ID', 'PERKS_CLIENT_SECRET', 'PERKS_BASE_URL'].includes(k),
      ),
    );
    const r = await perks(['writeback', '--verify'], {
      ...clean,
      PERKS_CLIENT_ID: '',
      PERKS_CLIENT_SECRET: '',
      PERKS_BASE_URL: '',
    });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toContain(`0 missing, ${sent.sent} unchecked`);
    expect(r.stdout).toContain('not verified');
  });
});
