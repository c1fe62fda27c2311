import { describe, test } from 'vitest';
import { personalDataScenario } from './scenarios/personal-data.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('personal data', () => {
  test('after a user is anonymised upstream and the next run, and after perks forget --user, no file value holds their email or their names together, old snapshots and windows included', async () => {
    expectAtGoal(await personalDataScenario(fast()));
  });
});
