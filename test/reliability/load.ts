/**
 * `npm run reliability -- --under-load`: the machine's cores kept busy by other processes, as on a shared CI
 * runner or analytics box. One CPU burner per core (a child process spinning at normal priority), started
 * before the scenarios and killed after them, whatever happens in between.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';

export interface Burners {
  count: number;
  stop(): Promise<void>;
}

export function startBurners(count = availableParallelism()): Burners {
  const children: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  const kill = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', kill); // the suite stopped some other way: no burner outlives it
  return {
    count,
    async stop() {
      process.removeListener('exit', kill);
      const exited = children.map((c) =>
        c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r)),
      );
      kill();
      await Promise.all(exited);
    },
  };
}

/** The 1-minute load average, for the figures (the machine may be loaded by others too). */
export const loadAverage = () => loadavg()[0].toFixed(2);
