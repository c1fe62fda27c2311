import { describe, test } from 'vitest';
import { lockScenario } from './scenarios/concurrency.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('one run per output directory', () => {
  test('a second extract, run or build exits with code 5 at once (while the holder still runs) naming the holder, and a killed or stale holder is taken over', async () => {
    expectAtGoal(await lockScenario(fast()));
  });
});
