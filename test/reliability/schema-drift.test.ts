import { describe, test } from 'vitest';
import { schemaDriftScenario } from './scenarios/schema-drift.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('schema drift', () => {
  test('fields added, retyped, removed and nested over three daily runs: every extra is landed in _extra, the schema history names each change with its first day, and a field declared afterwards reads typed values for past records without a call', async () => {
    expectAtGoal(await schemaDriftScenario(fast()));
  }, 300_000);
});
