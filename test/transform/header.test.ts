/** The header a model file opens with: one line per column's meaning, or more, indented deeper. */
import { expect, test } from 'vitest';
import { parseHeader } from '../../src/transform/models/header.js';

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

test('an incremental model declares its month, its key and its lookups; a malformed line is one error naming the file', () => {
  const h = parseHeader(
    '-- key: organisation_group_id, order_id\n-- incremental: month on organisation_group_id, order_date\n-- lookup: stg_user_emails(email) = lower(trim(email))\n-- edges: stg_a, stg_b\nselect 1\n',
    'sql/staging/x.sql',
  );
  expect(h.incremental).toEqual({
    grain: 'month',
    group: 'organisation_group_id',
    time: 'order_date',
    lookups: [{ model: 'stg_user_emails', column: 'email', expression: 'lower(trim(email))' }],
    edges: ['stg_a', 'stg_b'],
  });
  expect(() => parseHeader('-- key: a\n-- incremental: by day\nselect 1\n', 'sql/x.sql')).toThrow(
    'sql/x.sql: incremental "by day" is not understood; expected "month on <group column>, <date column>"',
  );
  expect(() => parseHeader('-- incremental: month on g, d\nselect 1\n', 'sql/x.sql')).toThrow(
    'sql/x.sql: an incremental model needs a key: line (its rows are matched by key)',
  );
  expect(() => parseHeader('-- lookup: m(c) = c\nselect 1\n', 'sql/x.sql')).toThrow(
    'sql/x.sql: a lookup: line belongs to an incremental model (an incremental: line)',
  );
  expect(() => parseHeader('-- edges: m\nselect 1\n', 'sql/x.sql')).toThrow(
    'sql/x.sql: an edges: line belongs to an incremental model (an incremental: line)',
  );
  // one model joined twice (a month's state and the month before's): the same key and columns, or one error
  const twice = (second: string) =>
    parseHeader(
      `-- key: g, m\n-- incremental: month on g, m\n-- lookup: s(m) = m, reading x\n-- lookup: ${second}\nselect 1\n`,
      'sql/x.sql',
    );
  expect(twice('s(m) = m - 1, reading x').incremental!.lookups.map((l) => l.expression)).toEqual(['m', 'm - 1']);
  expect(() => twice('s(m) = m - 1, reading y')).toThrow(
    'sql/x.sql: the lookups of s join it on different columns or read different ones; join every lookup of a model on the same column, reading the same columns',
  );
});

test('a model declares the intervals its rows fall in, and a lookup the columns it reads', () => {
  const stats = parseHeader('-- key: g, w, u\n-- intervals: month on g, w\nselect 1\n', 'sql/s.sql');
  expect(stats.intervals).toEqual({ grain: 'month', group: 'g', time: 'w' });
  expect(stats.incremental).toBeUndefined();
  const mart = parseHeader(
    '-- key: g, month, u\n-- incremental: month on g, month\n-- lookup: stg_users(user_id) = user_id, reading user_uid, email\nselect 1\n',
    'sql/m.sql',
  );
  expect(mart.intervals).toEqual({ grain: 'month', group: 'g', time: 'month' });
  expect(mart.incremental?.lookups).toEqual([
    { model: 'stg_users', column: 'user_id', expression: 'user_id', reads: ['user_uid', 'email'] },
  ]);
  expect(() => parseHeader('-- intervals: weekly\nselect 1\n', 'sql/x.sql')).toThrow(
    'sql/x.sql: intervals "weekly" is not understood; expected "month on <group column>, <date column>"',
  );
});

test('a model built by users names its group and user columns, its own user column and its group-wide CTEs', () => {
  const header = parseHeader(
    [
      '-- Milestones.',
      '-- key: interaction_id',
      '-- incremental: user on organisation_group_id, user_id = identifier_value',
      '-- group-wide: group_currency, group_totals',
      'select 1',
    ].join('\n'),
    'm.sql',
  );
  expect(header.byUser).toEqual({
    group: 'organisation_group_id',
    user: 'user_id',
    own: 'identifier_value',
    groupWide: ['group_currency', 'group_totals'],
  });
  expect(header.incremental).toBeUndefined();
  expect(parseHeader('-- incremental: user on g, u\nselect 1', 'm.sql').byUser).toEqual({
    group: 'g',
    user: 'u',
    own: 'u',
    groupWide: [],
  });
  expect(() => parseHeader('-- group-wide: group_currency\nselect 1', 'w.sql')).toThrow(
    'w.sql: a group-wide: line belongs to a model built by users (an incremental: user on … line)',
  );
  expect(() => parseHeader('-- incremental: users of g\nselect 1', 'w.sql')).toThrow(
    'or "user on <group column>, <user column>[ = <own column>]"',
  );
});
