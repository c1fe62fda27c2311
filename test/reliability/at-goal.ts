/** For the suite's fast part under vitest: quiet options, and every row of a scenario at its goal. */
import { expect } from 'vitest';
import type { Row, ScenarioOptions } from './table.js';

export const fast = (seed = 1): ScenarioOptions => ({ long: false, seed, log: () => undefined });

export function expectAtGoal(rows: Row[]): void {
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) expect(r.problems ?? [], `${r.scenario}: ${r.figure}`).toEqual([]);
  for (const r of rows) expect(r.ok).toBe(true);
}
