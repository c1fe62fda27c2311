import { describe, expect, test } from 'vitest';
import { incrementalScenario } from './scenarios/incremental.js';
import { windowsScenario } from './scenarios/windows.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('the incremental contract', () => {
  test('the same windows twice add nothing and leave the marts identical, a state from the far future is refused, and a run restarted from saved states ends in the full set', async () => {
    const rows = await incrementalScenario({ ...fast(), restarts: 3 });
    expectAtGoal(rows);
    // A watermark years ahead is refused loudly, with nothing called or changed (issue 16 §6; was exit 0 and nothing done, issue 9 §3).
    expect(rows[1].figure).toBe('exit 2, 0 orders calls, 0 redemption_stats calls, lake unchanged');
  }, 300_000);
});

describe('window boundaries', () => {
  test('orders on a local midnight and on daylight-saving days land once on their day, and 1,000 random splits of a range give the windows of the whole', async () => {
    expectAtGoal(await windowsScenario({ ...fast(), splits: 1000 }));
  });
});
