import { describe, test } from 'vitest';
import { expectAtGoal, fast } from './at-goal.js';
import { hostilePathsScenario } from './scenarios/hostile-paths.js';
import { sandboxMemoryScenario } from './scenarios/hostile-sandbox.js';

describe('hostile input', () => {
  test('an output folder named with [ ] ? * { }, quotes, spaces or unicode reads only its own lake, beside a decoy its name would match as a glob; a copied output directory reads its own', async () => {
    expectAtGoal(await hostilePathsScenario({ ...fast(16), paths: 1, fixed: ['out[r]', 'a?b', 'st*r q\'uo"te ü'] }));
  }, 300_000);

  test('the sandbox answers hostile and malformed requests (new client ids of 900 kB, long unknown paths, made-up tokens, a malformed Host) with 4xx, and what it keeps alive stays bounded and flat', async () => {
    expectAtGoal(await sandboxMemoryScenario({ ...fast(16), requests: 6_000, maxKeptMb: 3, maxSecondRoundMb: 2 }));
  }, 300_000);
});
