/**
 * Subsets of the reliability suite are chosen by name (`npm run reliability -- --only`: suite.ts, and the cases, storms
 * and runs the fast tests here pick): a name that selects nothing is an error, never a smaller run.
 */
import { describe, expect, test } from 'vitest';
import { selectByName } from './table.js';

const ALL = [{ name: 'crash' }, { name: 'faults' }, { name: 'drift' }];
const select = (names?: string[]) => selectByName('scenario', ALL, (s) => s.name, names);

describe('a subset chosen by name', () => {
  test('selects what it names, in its order, and everything when no subset is given', () => {
    expect(select(['drift', 'crash'])).toEqual([{ name: 'drift' }, { name: 'crash' }]);
    expect(select()).toEqual(ALL);
  });

  test('a misspelt name, or an empty subset, is an error naming it and what is known', () => {
    expect(() => select(['crash', 'fualts'])).toThrow(
      'unknown scenario "fualts": a subset names some of "crash", "faults", "drift"',
    );
    expect(() => select([])).toThrow('no scenario named: a subset names some of "crash", "faults", "drift"');
  });
});
