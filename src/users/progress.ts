/** The import's progress: a bar on a terminal (stderr), nothing elsewhere (stdout keeps the report). */
import type { ImportPhase } from './import.js';

export function importProgress(
  stream: NodeJS.WriteStream = process.stderr,
): ((phase: ImportPhase, done: number, total: number) => void) | undefined {
  if (!stream.isTTY) return undefined;
  let last = '';
  return (phase, done, total) => {
    const width = 30;
    const share = total ? Math.min(1, done / total) : 1;
    const line = `\r${phase.padEnd(8)} [${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${done}/${total}`;
    if (line === last) return;
    last = line;
    stream.write(line + (done >= total ? '\n' : ''));
  };
}
