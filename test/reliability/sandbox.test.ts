import { describe, test } from 'vitest';
import { sandboxScenario } from './scenarios/sandbox-choices.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('the sandbox', () => {
  test('binds to loopback by default, in-process and from the command line, and states its choice for every "not shown" of the spec', async () => {
    expectAtGoal(await sandboxScenario(fast()));
  });
});
