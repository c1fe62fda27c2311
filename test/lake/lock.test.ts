import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { acquireLock, lockPath, LockedError } from '../../src/lake/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { tempOut } from '../support/scratch.js';
import { wallClock } from '../support/wall-clock.js';
import { ROOT } from './helpers.js';

/** A separate process holding the lock; resolves once it says it holds it. */
function holder(outDir: string, mode?: 'exit'): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'test/lake/fixtures/hold-lock.ts'), outDir, ...(mode ? [mode] : [])],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const m = /held (\d+)/.exec(String(d));
      if (m) resolve({ child, pid: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode ? resolve() : child.once('exit', () => resolve()),
  );

describe('the output directory lock', () => {
  test('a second run on the same directory fails at once, naming the holder, exit code 5', async () => {
    const out = tempOut();
    const { child, pid } = await holder(out);
    try {
      const started = performance.now();
      const error = await acquireLock(out).catch((e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(error).toBeInstanceOf(LockedError);
      expect((error as LockedError).exitCode).toBe(ExitCode.locked);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^output directory ${out} is in use by another run \\(pid ${pid} on ${hostname()}, started \\d{4}-\\d\\d-\\d\\dT`,
        ),
      );
      expect((error as Error).message).toContain(`delete ${lockPath(out)}`);
    } finally {
      child.kill('SIGKILL');
      await exited(child);
    }
  });

  test('the lock of a run killed with SIGKILL is taken over by the next run', async () => {
    const out = tempOut();
    const { child, pid } = await holder(out);
    child.kill('SIGKILL');
    await exited(child);
    expect(JSON.parse(await readFile(lockPath(out), 'utf8')).pid).toBe(pid);
    const lock = await acquireLock(out);
    expect(JSON.parse(await readFile(lockPath(out), 'utf8')).pid).toBe(process.pid);
    await lock.release();
    expect(existsSync(lockPath(out))).toBe(false);
  });

  test('a run that ends normally leaves no lock behind', async () => {
    const out = tempOut();
    const { child } = await holder(out, 'exit');
    await exited(child);
    expect(existsSync(lockPath(out))).toBe(false);
  });

  test('within one process a second acquire fails too, and succeeds after release', async () => {
    const out = tempOut();
    const lock = await acquireLock(out);
    await expect(acquireLock(out)).rejects.toThrow(LockedError);
    await lock.release();
    await lock.release();
    const again = await acquireLock(out);
    await again.release();
  });

  test('a lock from another host is honoured while its heartbeat is fresh and taken over once stale', async () => {
    const out = tempOut();
    const lockOf = (minutesAgo: number) => {
      const at = wallClock(-minutesAgo * 60_000).toISOString(); // the lock judges heartbeats on the wall clock
      return JSON.stringify({
        pid: 1,
        host: 'elsewhere.example',
        started_at: at,
        heartbeat_at: at,
        token: `t${minutesAgo}`,
      });
    };
    await writeFile(lockPath(out), lockOf(1));
    await expect(acquireLock(out)).rejects.toThrow(/pid 1 on elsewhere\.example/);
    await writeFile(lockPath(out), lockOf(11));
    const lock = await acquireLock(out);
    expect(JSON.parse(await readFile(lockPath(out), 'utf8')).host).toBe(hostname());
    await lock.release();
  });

  test('releasing does not remove a lock that another run has since taken over', async () => {
    const out = tempOut();
    const lock = await acquireLock(out);
    const other = JSON.stringify({
      pid: 1,
      host: 'elsewhere.example',
      started_at: 'x',
      heartbeat_at: wallClock().toISOString(),
      token: 'other',
    });
    await writeFile(lockPath(out), other);
    await lock.release();
    expect(await readFile(lockPath(out), 'utf8')).toBe(other);
  });
});
