import { describe, test } from 'vitest';
import { buildCrashScenario, writebackCrashScenario } from './scenarios/crash-downstream.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('crashes downstream of the lake', () => {
  test('a build killed at random moments, after a model and just before its swap leaves the previous warehouse and marts whole for readers, and the next build succeeds with no temporary file left', async () => {
    expectAtGoal(await buildCrashScenario({ ...fast(3), kills: 2 }));
  });

  test('a write-back killed mid-run and rerun stores every interaction upstream exactly once', async () => {
    expectAtGoal(await writebackCrashScenario({ ...fast(3), kills: 1 }));
  });
});
