/** The stream definitions are data, checked when they are loaded: a bad one names the stream and the field. */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { defineStream, STREAM_NAMES, streams, type WindowedStream } from '../../pipelines/index.js';
import { streamList } from '../../pipelines/define.js';

const snapshot = (name: string, dependsOn: string[] = []) =>
  defineStream({
    name,
    description: `${name}, for the test`,
    kind: 'snapshot',
    scope: 'group',
    operation: 'listUsers',
    record: z.object({ id: z.int() }),
    key: ['id'],
    dependsOn,
  });

test('the project streams, in dependency order, are the names --streams takes', () => {
  expect(STREAM_NAMES).toEqual(['groups', 'users', 'offers', 'orders', 'redemption_stats', 'credit', 'interactions']);
  expect(streams.map((s) => s.name)).toEqual(STREAM_NAMES);
});

test('a definition with a bad field is refused at load time, naming the stream and the field', () => {
  expect(() => snapshot('Users')).toThrow(/^stream definition Users: name: expected a lower_snake_case name$/);
  expect(() => defineStream({ ...snapshot('users'), key: [] })).toThrow(/^stream definition users: key: /);
});

test('a list names each stream once, and every stream a definition depends on comes before it', () => {
  expect(streamList([snapshot('groups'), snapshot('users', ['groups'])]).map((s) => s.name)).toEqual([
    'groups',
    'users',
  ]);
  expect(() => streamList([snapshot('users', ['groups']), snapshot('groups')])).toThrow(
    'stream definition users: dependsOn groups, which no stream before it is',
  );
  expect(() => streamList([snapshot('groups'), snapshot('groups')])).toThrow('stream definition groups: defined twice');
});

test("a guard weighing a field the re-read does not compare is refused: it would read that field's changes as none", () => {
  const orders = streams.find((s) => s.name === 'orders') as WindowedStream;
  const guard = { status: 'order_status', currency: 'order_currency', amount: 'order_total_paid_net' };
  expect(() => defineStream({ ...orders, guard })).toThrow(
    /^stream definition orders: guard: every field of the guard must be in activity.compare \(missing: order_total_paid_net\)$/,
  );
});
