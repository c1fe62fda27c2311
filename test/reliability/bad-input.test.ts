import { describe, test } from 'vitest';
import { badInputScenario } from './scenarios/bad-input.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('bad input', () => {
  test('malformed settings, impossible dates and unknown streams each get one line naming the value and exit code 2, and nothing is written', async () => {
    const cases = [
      'PERKS_RATE_LIMIT not a number',
      'PERKS_BASE_URL not http(s)',
      'PERKS_BASE_URL with a password',
      'PERKS_API_TIMEZONE unknown',
      'PERKS_GROUP_IDS with a group twice',
      'PERKS_SCOPE blank',
      'PERKS_NOW not an instant',
      'PERKS_GROUP_IDS malformed',
      'PERKS_START_DATE 2026-02-30',
      '--start-date 2026-02-30',
      '--streams with an unknown stream',
      'output path is a file',
      'forget --user not an id',
    ];
    expectAtGoal(await badInputScenario({ ...fast(), cases }));
  });

  test('every flag and setting is checked before any work (dates, safe ids, output paths, queries): one line naming it, exit 2; --plan writes nothing; damaged data is exit 1 in every command', async () => {
    const cases = [
      'run --month abc',
      'run --budget-minutes -1',
      'users get --id beyond a safe integer',
      'extract --end-date 2026-1-1',
      'PERKS_START_DATE 2026-1-1',
      'build --as-of abc',
      'extract --groups beyond a safe integer, --plan',
      'PERKS_CLIENT_ID beyond a safe integer',
      'extract --plan writes nothing',
      'PERKS_OUTPUT with a 300-character folder name',
      'PERKS_OUTPUT with a comma',
      'sql with an empty query',
      'sql reading a file outside the output directory',
      'sql on a damaged warehouse (exit 1, not bad input)',
      'report on a damaged warehouse (exit 1, not bad input)',
      'sql on a damaged lake file (exit 1, not bad input)',
      'state file of the wrong shape',
      'watermark beyond tomorrow (a clock set back)',
      'watermark beyond tomorrow, then --full-refresh',
    ];
    expectAtGoal(await badInputScenario({ ...fast(), cases }));
  }, 600_000);

  test('a damaged Parquet file is healed when its window or snapshot is landed again, by the next extract whatever its age, and named in one line by the build with the command that repairs it', async () => {
    const cases = [
      'corrupt Parquet file in a window the run re-extracts (healed)',
      'corrupt users snapshot, re-landed before it is read (healed)',
      'corrupt users snapshot of an earlier day, removed by the next run (healed)',
      'corrupt Parquet file, then perks build',
      'corrupt Parquet file outside the lookback, healed by the next extract',
      'corrupt Parquet file, repaired by the command the build names',
      'wrong client secret',
    ];
    expectAtGoal(await badInputScenario({ ...fast(), cases }));
  });
});
