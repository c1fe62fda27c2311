import { describe, test } from 'vitest';
import { expectAtGoal, fast } from './at-goal.js';
import { hostilePathsScenario } from './scenarios/hostile-paths.js';

describe('hostile input', () => {
  test('an output folder named with [ ] ? * { }, quotes, spaces or unicode reads only its own lake, beside a decoy its name would match as a glob; a copied output directory reads its own', async () => {
    expectAtGoal(await hostilePathsScenario({ ...fast(16), paths: 1, fixed: ['out[r]', 'a?b', "st*r q'uo\"te ü"] }));
  }, 120_000);
});
