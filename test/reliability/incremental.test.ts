import { describe, expect, test } from 'vitest';
import { incrementalScenario } from './scenarios/incremental.js';
import { windowsScenario } from './scenarios/windows.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('the incremental contract', () => {
  test('the same windows twice add nothing and leave the marts identical, and a run restarted from saved states ends in the full set', async () => {
    const rows = await incrementalScenario({ ...fast(), restarts: 3 });
    expectAtGoal(rows);
    // A watermark years ahead extracts nothing for any windowed stream (issue 9 §3).
    expect(rows[1].figure).toBe('exit 0, 0 orders calls, 0 redemption_stats calls, lake unchanged');
  }, 120_000);
});

describe('window boundaries', () => {
  test('orders on a local midnight and on daylight-saving days land once on their day, and 1,000 random splits of a range give the windows of the whole', async () => {
    expectAtGoal(await windowsScenario({ ...fast(), splits: 1000 }));
  });
});
