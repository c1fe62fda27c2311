/**
 * Progress of a run: on a terminal, one updating line per stream; elsewhere (CI), one JSON line per
 * event on stderr, so stdout stays for results, its keys in snake_case (docs/reference/operations.md, "JSON
 * keys"). Every line passes through the redactor.
 */
import { snakeJson } from '../shared/json-keys.js';
import { redact } from '../shared/redact.js';
import type { Event } from './run-context.js';
import { now } from '../shared/clock.js';

export function progressReporter(stream: NodeJS.WriteStream = process.stderr, quiet = false): (e: Event) => void {
  if (quiet) return () => undefined;
  if (!stream.isTTY) {
    return (e) => stream.write(`${redact(snakeJson({ at: now().toISOString(), ...e }))}\n`);
  }
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
      stream.write(
        `\r${key.padEnd(17)} ${String(e.status).padEnd(8)} ${String(e.rows)} rows, ${String(e.calls)} calls, ${String(e.ms)} ms${' '.repeat(20)}\n`,
      );
    } else if (e.event === 'warning' || e.event === 'error') {
      stream.write(`\n${e.event}: ${redact(String(e.message))}\n`);
    }
  };
}
