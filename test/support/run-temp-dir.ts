/**
 * Vitest's global setup: every temporary directory of a test run (the tests', the perks children's, DuckDB's)
 * is made inside one folder of the run, through TMPDIR, which the test workers and every child process
 * inherit. A run that passes removes it: each run made about 200 directories and 500 MB in the system's
 * temporary directory, never cleared on a developer's machine. A run with a failure keeps it and says where,
 * so what the failing test left can be looked at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopSharedRgw } from './rgw.js';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'perks-test-run-'));
  // the system's, for a test that plays a fresh shell (fresh-checkout.test.ts: another user can't enter `dir`)
  process.env.PERKS_TEST_SYSTEM_TMPDIR = tmpdir();
  process.env.TMPDIR = dir;
  // the suite's one Ceph cluster, started by the first test that needs it (rgw.ts), stopped here
  process.env.PERKS_TEST_RGW_DIR = join(dir, 'rgw');
  return () => {
    stopSharedRgw(process.env.PERKS_TEST_RGW_DIR);
    const state = project.vitest.state;
    const passed = state.getCountOfFailedTests() === 0 && state.getUnhandledErrors().length === 0;
    if (passed) rmSync(dir, { recursive: true, force: true });
    else console.error(`a test failed: the run's temporary files are kept in ${dir}; remove it when done`);
  };
}
