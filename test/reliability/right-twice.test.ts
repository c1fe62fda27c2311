import { describe, test } from 'vitest';
import { rightTwiceScenario } from './scenarios/right-twice.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('right twice', () => {
  test('a second run the same day after the platform changed leaves orders, signalled credit and erasures equal to the platform, under a tight budget too', async () => {
    expectAtGoal(
      await rightTwiceScenario({
        ...fast(),
        runs: ['same day', 'same day, tight budget', 'same day, two --groups workers'],
      }),
    );
  }, 180_000);

  test('a second run killed at a named point and rerun, and a second run the next day, end the same', async () => {
    expectAtGoal(
      await rightTwiceScenario({
        ...fast(),
        runs: [
          'same day, killed after a page',
          'same day, killed after a rename',
          'same day, killed after a state write',
          'next day',
        ],
      }),
    );
  }, 300_000);
});
