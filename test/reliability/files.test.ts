import { describe, test } from 'vitest';
import { filesScenario } from './scenarios/files.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('files', () => {
  test('state, quarantine and lake are 0600 in 0700 folders under umask 000, nothing is written outside the output, hostile strings never leave the lake as paths and reach SQL only as values', async () => {
    expectAtGoal(await filesScenario({ ...fast(), strings: 10_000 }));
  });
});
