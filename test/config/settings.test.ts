/**
 * Every setting the stages, the store and the CI read is parsed once by src/config (one schema): its default,
 * its value, and a bad value as one line naming the variable (exit 2).
 */
import { expect, test } from 'vitest';
import { ConfigError } from '../../src/shared/exit-codes.js';
import { checkedOutputPath, debugWanted, DEFAULTS, loadConfig, outputSetting } from '../../src/config/index.js';

test('unset, each setting is its default (or absent)', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({
    buildMemoryLimit: DEFAULTS.build.memoryLimit,
    martLayout: DEFAULTS.build.martLayout,
    revenueStatuses: DEFAULTS.revenueStatuses,
    writebackTypes: {},
    s3PathStyle: false,
    debug: false,
  });
  for (const key of ['fxRates', 'reportingCurrency', 'operator', 'warnAfter', 'errorAfter', 'cacheDir'] as const)
    expect(c[key]).toBeUndefined();
  expect(c.stepSummary).toBeUndefined();
});

test('each variable is read into its setting', () => {
  const c = loadConfig({
    PERKS_BUILD_MEMORY_LIMIT: ' 4GB ',
    PERKS_MART_LAYOUT: 'months',
    PERKS_REVENUE_STATUSES: 'Complete, Pending,Complete',
    PERKS_FX_RATES: '/tmp/rates.csv',
    PERKS_REPORTING_CURRENCY: 'EUR',
    PERKS_OPERATOR: 'finance-bot',
    PERKS_WRITEBACK_TYPES: 'segment_change=engagement_segment, savings_milestone=milestone',
    PERKS_WARN_AFTER: '2h',
    PERKS_ERROR_AFTER: '3d',
    PERKS_CACHE_DIR: '/var/cache/perks',
    XDG_CACHE_HOME: '/home/ci/.cache',
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
    AWS_REGION: 'eu-west-2',
    PERKS_S3_PATH_STYLE: 'true',
    PERKS_DEBUG: '1',
    GITHUB_STEP_SUMMARY: '/tmp/summary.md',
  });
  expect(c).toMatchObject({
    buildMemoryLimit: '4GB',
    martLayout: 'months',
    revenueStatuses: ['Complete', 'Pending'],
    fxRates: '/tmp/rates.csv',
    reportingCurrency: 'EUR',
    operator: 'finance-bot',
    writebackTypes: { segment_change: 'engagement_segment', savings_milestone: 'milestone' },
    warnAfter: '2h',
    errorAfter: '3d',
    cacheDir: '/var/cache/perks',
    xdgCacheHome: '/home/ci/.cache',
    awsEndpointUrlS3: 'http://127.0.0.1:9000',
    awsRegion: 'eu-west-2',
    s3PathStyle: true,
    debug: true,
    stepSummary: '/tmp/summary.md',
  });
});

test.each([
  ['PERKS_BUILD_MEMORY_LIMIT', 'lots', 'PERKS_BUILD_MEMORY_LIMIT="lots" is invalid: expected a size such as 1GB'],
  ['PERKS_MART_LAYOUT', 'folders', 'PERKS_MART_LAYOUT="folders" is invalid: expected file, months or both'],
  [
    'PERKS_REVENUE_STATUSES',
    'Complete,,',
    'PERKS_REVENUE_STATUSES="Complete,," is invalid: expected comma-separated order statuses, e.g. Complete or Complete,Pending',
  ],
  [
    'PERKS_WRITEBACK_TYPES',
    'segment_change',
    'PERKS_WRITEBACK_TYPES="segment_change" is invalid: expected kind=type pairs separated by commas, e.g. segment_change=segment_change',
  ],
  [
    'PERKS_S3_PATH_STYLE',
    'yes',
    'PERKS_S3_PATH_STYLE="yes" is invalid: expected 1 or true (path-style addressing), 0 or false',
  ],
  ['PERKS_OPERATOR', '  ', 'PERKS_OPERATOR="  " is invalid: must not be blank'],
])('a bad %s is one line naming it, exit 2', (name, value, message) => {
  const load = () => loadConfig({ [name]: value });
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(message);
  try {
    load();
  } catch (err) {
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as Error).message).toBe(message);
  }
});

test('the output is --output, else PERKS_OUTPUT, else the default folder, with what gave it', () => {
  expect(outputSetting('s3://b/p', { PERKS_OUTPUT: './elsewhere' })).toEqual({ value: 's3://b/p', source: '--output' });
  expect(outputSetting(undefined, { PERKS_OUTPUT: './elsewhere' })).toEqual({
    value: './elsewhere',
    source: 'PERKS_OUTPUT',
  });
  expect(outputSetting(undefined, {})).toEqual({ value: DEFAULTS.output, source: 'default' });
  expect(outputSetting(undefined, { PERKS_OUTPUT: '' })).toEqual({ value: DEFAULTS.output, source: 'default' });
  // the settings carry no output (the command's Output does), and a bad PERKS_OUTPUT stops none of them
  expect(loadConfig({ PERKS_OUTPUT: 'a,b' })).not.toHaveProperty('output');
  // a bad folder is named as what gave it
  expect(() => checkedOutputPath('a,b', 'PERKS_OUTPUT')).toThrow(/^PERKS_OUTPUT="a,b" is invalid: expected no comma/);
  expect(() => checkedOutputPath('a,b', '--output')).toThrow(/^--output="a,b" is invalid/);
  expect(checkedOutputPath('./here', '--output')).toBe('./here');
});

test('PERKS_DEBUG is on for any value but 0 and false, read alone even when another setting is bad', () => {
  expect(debugWanted({ PERKS_DEBUG: '1', PERKS_RATE_LIMIT: 'lots' })).toBe(true);
  for (const off of [undefined, '', '0', 'false', 'FALSE']) expect(debugWanted({ PERKS_DEBUG: off })).toBe(false);
  expect(loadConfig({ PERKS_DEBUG: 'false' }).debug).toBe(false);
});
