import { describe, expect, test } from 'vitest';
import { EXTRACT_CRASH_POINTS } from '../../src/shared/crash-points.js';
import { crashScenario } from './scenarios/crash.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('crash anywhere', () => {
  test('an extract killed at random moments and at every named commit point is rerun to exactly the sandbox data, with no temporary file left and no torn window seen by a reader', async () => {
    const rows = await crashScenario({ ...fast(7), kills: 2, points: EXTRACT_CRASH_POINTS, days: 20 });
    expectAtGoal(rows);
    expect(rows.map((r) => r.scenario)).toEqual([
      'crash: SIGKILL at random moments',
      'crash: named commit points',
      'readers during writes (lake)',
    ]);
  }, 400_000);
});
