/** The header a model file opens with: one line per column's meaning, or more, indented deeper. */
import { expect, test } from 'vitest';
import { parseHeader } from '../../src/transform/header.js';

test("a column's meaning continues on the lines indented deeper below it", () => {
  const header = parseHeader(
    [
      '-- Revenue per group and month.',
      '-- grain: one row per organisation_group_id, month',
      '-- key: organisation_group_id, month',
      '-- columns:',
      '--   month: first day of the',
      "--     group's local month",
      '--   orders: orders placed',
      '-- tests:',
      '--   unique: organisation_group_id, month',
      'select 1',
    ].join('\n'),
    'sql/marts/example.sql',
  );
  expect(header.columns).toEqual({ month: "first day of the group's local month", orders: 'orders placed' });
  expect(header.tests).toEqual([{ kind: 'unique', columns: ['organisation_group_id', 'month'] }]);
  expect(header.description).toBe('Revenue per group and month.');
});
