import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The 22-day schedule (about 160 s) runs whole in `npm run reliability`, CI's second step, not twice in CI:
    // npm test stays within its 20 minutes. `npm run reliability -- --only schedule` runs it alone.
    exclude: [...configDefaults.exclude, 'test/reliability/schedule.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // every temporary directory of the run in one folder, removed when the run passes (run-temp-dir.ts)
    globalSetup: ['test/support/run-temp-dir.ts'],
    // Tests never read the calendar: the program's clock (and every perks child process, which inherits
    // it through test/support/cli.ts) is pinned. PERKS_TEST_NOW moves the whole suite to another instant.
    env: { PERKS_NOW: process.env.PERKS_TEST_NOW ?? '2026-11-22T12:00:00Z' },
  },
});
