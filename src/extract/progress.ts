/**
 * Progress of a run, on stderr so stdout stays for results, in one of four modes (docs/reference/operations.md,
 * "Progress"): `bar`, one updating line per stream (a terminal); `lines`, one line per stream finished and per
 * warning or error (a person reading a log: `perks demo` off a terminal); `json`, one JSON line per event, its keys
 * in snake_case (a machine: `perks run` and `perks extract` off a terminal); `none` (--quiet). Every line passes
 * through the redactor.
 */
import { snakeJson } from '../shared/json-keys.js';
import { redact } from '../shared/redact.js';
import type { Event } from './run-context.js';
import { now } from '../shared/clock.js';

export const PROGRESS_MODES = ['bar', 'lines', 'json', 'none'] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];

/** The mode asked for, else `bar` on a terminal and `offTerminal` elsewhere; --quiet wins. */
export function progressMode(
  stream: NodeJS.WriteStream,
  asked: { quiet?: boolean; progress?: ProgressMode },
  offTerminal: ProgressMode,
): ProgressMode {
  if (asked.quiet) return 'none';
  return asked.progress ?? (stream.isTTY ? 'bar' : offTerminal);
}

export function progressReporter(
  stream: NodeJS.WriteStream = process.stderr,
  mode: ProgressMode = stream.isTTY ? 'bar' : 'json',
): (e: Event) => void {
  if (mode === 'none') return () => undefined;
  if (mode === 'json') return (e) => stream.write(`${redact(snakeJson({ at: now().toISOString(), ...e }))}\n`);
  if (mode === 'lines') {
    return (e) => {
      if (e.event === 'stream_done') stream.write(`${doneLine(e)}\n`);
      else if (e.event === 'warning' || e.event === 'error') stream.write(`${e.event}: ${redact(String(e.message))}\n`);
    };
  }
  return barReporter(stream);
}

/** "orders           success  4940 rows, 360 calls, 6612 ms" */
const doneLine = (e: Event): string =>
  `${(e.stream ?? '').padEnd(17)} ${String(e.status).padEnd(8)} ${String(e.rows)} rows, ${String(e.calls)} calls, ${String(e.ms)} ms`;

function barReporter(stream: NodeJS.WriteStream): (e: Event) => void {
  const counts = new Map<string, { windows: number; planned: number }>();
  return (e) => {
    const key = e.stream ?? '';
    const c = counts.get(key) ?? { windows: 0, planned: 0 };
    counts.set(key, c);
    if (e.event === 'plan') c.planned += Number(e.windows ?? e.users ?? 0);
    if (e.event === 'window') c.windows += 1;
    if (e.event === 'batch') c.windows += Number(e.users ?? 0);
    if (e.event === 'window' || e.event === 'batch') {
      const width = 24;
      const done = c.planned ? Math.min(1, c.windows / c.planned) : 0;
      const bar = '#'.repeat(Math.round(done * width)).padEnd(width, '.');
      stream.write(`\r${key.padEnd(17)} [${bar}] ${c.windows}/${c.planned}`);
    } else if (e.event === 'stream_done') {
      stream.write(`\r${doneLine(e)}${' '.repeat(20)}\n`);
    } else if (e.event === 'warning' || e.event === 'error') {
      stream.write(`\n${e.event}: ${redact(String(e.message))}\n`);
    }
  };
}
