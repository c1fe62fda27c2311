import { describe, test } from 'vitest';
import { badInputScenario } from './scenarios/bad-input.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('bad input', () => {
  test('malformed settings, impossible dates and unknown streams each get one line naming the value and exit code 2, and nothing is written', async () => {
    const cases = ['PERKS_RATE_LIMIT not a number', 'PERKS_BASE_URL not http(s)', 'PERKS_BASE_URL with a password', 'PERKS_API_TIMEZONE unknown', 'PERKS_GROUP_IDS with a group twice', 'PERKS_SCOPE blank', 'PERKS_NOW not an instant', 'PERKS_GROUP_IDS malformed', 'PERKS_START_DATE 2026-02-30', '--start-date 2026-02-30', '--streams with an unknown stream', 'output path is a file', 'forget --user not an id'];
    expectAtGoal(await badInputScenario({ ...fast(), cases }));
  });

  test('a damaged Parquet file is healed when its window or snapshot is landed again, and named in one line by the build', async () => {
    const cases = ['corrupt Parquet file in a window the run re-extracts (healed)', 'corrupt users snapshot, re-landed before it is read (healed)', 'corrupt Parquet file, then perks build', 'wrong client secret'];
    expectAtGoal(await badInputScenario({ ...fast(), cases }));
  });
});
