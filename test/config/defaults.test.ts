/** Every default in one place (src/config/defaults.ts): the settings, the stages and the help texts read it. */
import { expect, test } from 'vitest';
import { DEFAULTS, loadConfig } from '../../src/config/index.js';
import { SegmentThresholds } from '../../src/transform/index.js';
import { revenueRuleFrom } from '../../src/report/index.js';
import { runCli } from '../support/cli.js';

test('a setting nobody gives is its default', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({
    scope: DEFAULTS.scope,
    rateLimit: DEFAULTS.rateLimit,
    creditPath: DEFAULTS.creditPath,
    lookbackDays: DEFAULTS.lookbackDays,
    deepRereadDays: DEFAULTS.deepRereadDays,
    apiTimezone: DEFAULTS.apiTimezone,
    refreshDays: DEFAULTS.refreshDays,
    quarantineThreshold: DEFAULTS.quarantineThreshold,
  });
  expect(SegmentThresholds.parse({})).toEqual(DEFAULTS.build.segments);
  expect(revenueRuleFrom({}).statuses).toEqual(DEFAULTS.revenueStatuses);
});

test('the help of a command says the defaults the program uses', async () => {
  const extract = await runCli(['extract', '--help'], {});
  expect(extract.code).toBe(0);
  const help = extract.stdout.replace(/\s+/g, ' ');
  for (const said of [
    `PERKS_RATE_LIMIT, default ${DEFAULTS.rateLimit}`,
    `PERKS_OUTPUT, default ${DEFAULTS.output}`,
    `in minutes at the rate limit (default ${DEFAULTS.extract.budgetMinutes})`,
    `PERKS_REFRESH_DAYS, default ${DEFAULTS.refreshDays}`,
    `PERKS_QUARANTINE_THRESHOLD, default ${DEFAULTS.quarantineThreshold}`,
    `(default ${DEFAULTS.extract.shardWaitMinutes})`,
  ])
    expect(help).toContain(said);
  const build = (await runCli(['build', '--help'], {})).stdout.replace(/\s+/g, ' ');
  expect(build).toContain(`churned" beyond (default ${DEFAULTS.build.segments.dormantDays})`);
});
