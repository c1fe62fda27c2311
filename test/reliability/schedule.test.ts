import { describe, test } from 'vitest';
import { expectAtGoal, fast } from './at-goal.js';
import { scheduleScenario } from './scenarios/schedule.js';

describe('a daily schedule', () => {
  test('22 daily perks runs across a month end against a platform that changes every day, with a close: orders exact, deep re-reads catch late refunds, erasures hold, write-back once, as closed + adjustments = as now', async () => {
    expectAtGoal(await scheduleScenario({ ...fast(), days: 22 }));
  }, 900_000);
});
