/**
 * scripts/check-no-skips.mjs, run by .ci/run after `npm test`: a test that did not run fails CI. Its input is
 * vitest's JSON report, in the shape vitest 4 writes it (a file's `name` and its tests' `fullName` and `status`:
 * passed, failed, skipped, todo).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { tempOut } from '../support/scratch.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-no-skips.mjs');

function check(statuses: Record<string, string>) {
  const dir = tempOut('perks-no-skips-');
  const report = join(dir, 'vitest.json');
  const tests = Object.entries(statuses).map(([fullName, status]) => ({ fullName, status, title: fullName }));
  writeFileSync(
    report,
    JSON.stringify({
      numTotalTests: tests.length,
      testResults: [{ name: join(ROOT, 'test', 'store', 'lease.test.ts'), status: 'passed', assertionResults: tests }],
    }),
  );
  return spawnSync(process.execPath, [SCRIPT, report], { encoding: 'utf8', cwd: ROOT });
}

test('a report where every test ran passes', () => {
  const run = check({ 'one test': 'passed', 'another test': 'passed' });
  expect(run.stdout).toBe('check-no-skips: all 2 tests ran\n');
  expect(run.status).toBe(0);
});

test('a skipped or todo test fails, each named on its own line with its file', () => {
  const run = check({ 'one test': 'passed', 'the PID-namespace test': 'skipped', 'a test to write': 'todo' });
  expect(run.stdout.trim().split('\n')).toEqual([
    'check-no-skips: test/store/lease.test.ts: skipped: the PID-namespace test',
    'check-no-skips: test/store/lease.test.ts: todo: a test to write',
    'check-no-skips: 2 of 3 tests did not run on this machine: CI runs them all (README, what a test runner needs)',
  ]);
  expect(run.status).toBe(1);
});

test('no report is one line and exit 2', () => {
  const run = spawnSync(process.execPath, [SCRIPT, join(tempOut('perks-no-skips-'), 'none.json')], {
    encoding: 'utf8',
  });
  expect(run.stderr).toMatch(/^check-no-skips: cannot read vitest's JSON report .*none\.json .*: run npm test -- /);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.status).toBe(2);
});
