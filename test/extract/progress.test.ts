import { Writable } from 'node:stream';
import { expect, test } from 'vitest';
import { progressReporter } from '../../src/extract/index.js';
import { atInstant } from '../support/clock.js';

test('off a terminal, each event is one JSON line on stderr with snake_case keys, names of ranks kept', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  await atInstant('2026-11-22T12:00:00Z', () => {
    const report = progressReporter(stream);
    report({ event: 'plan', stream: 'credit', group: 11, users: 3, waiting: { credit_order: 1 }, lastSeenDay: 'd' });
    return Promise.resolve();
  });
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toEqual({
    at: '2026-11-22T12:00:00.000Z',
    event: 'plan',
    stream: 'credit',
    group: 11,
    users: 3,
    waiting: { credit_order: 1 },
    last_seen_day: 'd',
  });
});
