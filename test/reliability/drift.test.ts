import { describe, expect, test } from 'vitest';
import { driftScenario } from './scenarios/drift.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('data drift', () => {
  test('wrong-typed records are quarantined and counted, unknown fields counted, and everything else lands unchanged', async () => {
    const rows = await driftScenario({ ...fast(), rates: [0.1] });
    expectAtGoal(rows);
    expect(rows[0].runs).toBeGreaterThan(20);
  });
});
