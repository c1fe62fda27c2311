import { describe, test } from 'vitest';
import { readersScenario } from './scenarios/readers.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('readers during extracts and compactions', () => {
  test('DuckDB with its default settings and hyparquet, following the journal, never meet a broken file, a torn window or a window twice; a plain glob reader never meets a broken file', async () => {
    expectAtGoal(await readersScenario({ ...fast(5), reads: 300, maxMs: 150_000, days: 25 }));
  }, 500_000);
});
