import { Writable } from 'node:stream';
import { expect, test } from 'vitest';
import { progressMode, progressReporter } from '../../src/extract/index.js';
import { atInstant } from '../support/clock.js';

/** A stream that keeps what it is written, a terminal or not. */
function capture(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  stream.isTTY = isTTY;
  return { stream, text: () => chunks.join('') };
}

/** A stream's events as a run sends them: a plan, windows, its end; a warning between. */
const EVENTS = [
  { event: 'stream', stream: 'orders' },
  { event: 'plan', stream: 'orders', group: 11, windows: 3 },
  ...[1, 2, 3].map(() => ({ event: 'window', stream: 'orders', group: 11 })),
  { event: 'warning', stream: 'orders', message: 'group 12 has no timezone: UTC used' },
  { event: 'stream_done', stream: 'orders', status: 'success', rows: 42, calls: 3, ms: 120 },
];

test('lines (the demo off a terminal): one line per stream finished and per warning, no event of the windows', () => {
  const { stream, text } = capture(false);
  const report = progressReporter(stream, progressMode(stream, {}, 'lines'));
  for (const e of EVENTS) report(e);
  expect(text().split('\n')).toEqual([
    'warning: group 12 has no timezone: UTC used',
    'orders            success  42 rows, 3 calls, 120 ms',
    '',
  ]);
});

test('the mode: --quiet wins, then --progress, then a bar on a terminal and the command’s choice elsewhere', () => {
  const tty = capture(true).stream;
  const pipe = capture(false).stream;
  expect(progressMode(pipe, {}, 'json')).toBe('json');
  expect(progressMode(pipe, {}, 'lines')).toBe('lines');
  expect(progressMode(tty, {}, 'lines')).toBe('bar');
  expect(progressMode(pipe, { progress: 'json' }, 'lines')).toBe('json');
  expect(progressMode(tty, { progress: 'lines' }, 'json')).toBe('lines');
  expect(progressMode(pipe, { quiet: true, progress: 'json' }, 'json')).toBe('none');
  const { stream, text } = capture(false);
  const report = progressReporter(stream, 'none');
  for (const e of EVENTS) report(e);
  expect(text()).toBe('');
  // json: every event, one line each
  const json = capture(false);
  const all = progressReporter(json.stream, 'json');
  for (const e of EVENTS) all(e);
  expect(
    json
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: string }).event),
  ).toEqual(EVENTS.map((e) => e.event));
});

test('off a terminal, each event is one JSON line on stderr with snake_case keys, names of ranks kept', async () => {
  const { stream, text } = capture(false);
  await atInstant('2026-11-22T12:00:00Z', () => {
    const report = progressReporter(stream);
    report({ event: 'plan', stream: 'credit', group: 11, users: 3, waiting: { credit_order: 1 }, lastSeenDay: 'd' });
    return Promise.resolve();
  });
  const lines = text().trimEnd().split('\n');
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
