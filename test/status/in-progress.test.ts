/**
 * `perks status` shows a run in progress: whoever holds the output's lock (written here as the lock's code
 * writes it: src/lake/lock.ts), since when, its last heartbeat, and whether it looks stale; in text and JSON.
 * Heartbeats are written in wall time by every process (src/lake/lock.ts): the live lock here is taken by the
 * lock's own code (its heartbeat is the code's, the test reads no clock), the stale one carries a heartbeat of
 * 2000; status runs with PERKS_NOW pinned to other days, which must not change a heartbeat's age.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { acquireLock, lockPath } from '../../src/lake/index.js';
import { processIdentity } from '../../src/shared/process-identity.js';
import { runCli, startCli } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';

const sandbox = sandboxForFile({ today: '2026-11-22' });

const outDir = tempOut('perks-status-lock-');
const status = (at: string, format = 'text') =>
  runCli(['status', '--format', format], { PERKS_OUTPUT: outDir, PERKS_NOW: at });

/** A heartbeat long gone on any date this test runs: stale by the lock's rule (10 minutes). */
const LONG_AGO = '2000-01-01T00:00:00.000Z';

function holdLock(pid: number, heartbeatAt: string): void {
  const { host, boot_id, pid_ns } = processIdentity();
  mkdirSync(outDir, { recursive: true });
  const holder = { pid, host, boot_id, pid_ns, command: 'extract', started_at: '2026-11-22T11:58:00.000Z' };
  writeFileSync(lockPath(outDir), JSON.stringify({ ...holder, heartbeat_at: heartbeatAt, token: 'a1b2c3d4e5f60708' }));
}

test('a run holding the lock is shown: who, since when, its heartbeat; alive, then stale', async () => {
  const { host } = processIdentity();
  // taken as a run takes it: this process holds it, its heartbeat written now by the lock's code
  mkdirSync(outDir, { recursive: true });
  const lock = await acquireLock(outDir, { heartbeatMs: 600_000 });
  try {
    const held = JSON.parse(readFileSync(lockPath(outDir), 'utf8')) as { started_at: string; heartbeat_at: string };
    for (const pinned of ['2026-11-22T12:00:00Z', '2031-01-01T00:00:00Z']) {
      const line = (await status(pinned)).stdout.split('\n')[1];
      expect(line).toMatch(
        new RegExp(
          `^in progress: .+ \\(pid ${process.pid} on ${host}\\) since ${held.started_at}, last heartbeat ${held.heartbeat_at} \\(0(\\.\\d)? min ago\\)$`,
        ),
      );
    }
    const json = JSON.parse((await status('2026-11-22T12:00:00Z', 'json')).stdout) as {
      in_progress: Record<string, unknown>;
    };
    expect(json.in_progress).toMatchObject({
      pid: process.pid,
      host,
      started_at: held.started_at,
      heartbeat_at: held.heartbeat_at,
      stale: null,
    });
    expect(json.in_progress.heartbeat_age_minutes).toBeLessThan(1);
  } finally {
    await lock.release();
  }

  // a lock written by an extract: who and since when as it recorded them; no heartbeat for years: stale by the
  // lock's own rule (the next run takes it over), whatever day PERKS_NOW pins
  holdLock(process.pid, LONG_AGO);
  const text = await status('2026-11-22T12:00:00Z');
  expect(text.stdout.split('\n')[1]).toMatch(
    new RegExp(
      `^in progress: perks extract \\(pid ${process.pid} on ${host}\\) since 2026-11-22T11:58:00.000Z, last heartbeat ${LONG_AGO} \\(\\d+(\\.\\d)? min ago\\); looks STALE: no heartbeat for more than 10 minutes \\(the next run takes its lock over\\)$`,
    ),
  );
  const stale = JSON.parse((await status('2000-01-01T00:00:30Z', 'json')).stdout) as {
    in_progress: Record<string, unknown>;
  };
  expect(stale.in_progress).toMatchObject({
    command: 'extract',
    started_at: '2026-11-22T11:58:00.000Z',
    heartbeat_at: LONG_AGO,
    stale: 'no heartbeat for more than 10 minutes',
  });

  // its process gone on this machine: stale at once
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  holdLock(gone, LONG_AGO);
  const dead = JSON.parse((await status('2026-11-22T12:00:00Z', 'json')).stdout) as Record<string, unknown>;
  expect(dead.in_progress).toMatchObject({ pid: gone, stale: `its process ${gone} is gone` });

  rmSync(lockPath(outDir));
  const none = await status('2026-11-22T12:00:00Z');
  expect(none.stdout).not.toContain('in progress');
  expect(JSON.parse((await status('2026-11-22T12:00:00Z', 'json')).stdout).in_progress).toBe(null);
  rmSync(outDir, { recursive: true, force: true });
});

test('a real perks extract, paced slow, shows while it runs; killed, its lock looks stale', async () => {
  const out = tempOut('perks-status-extract-');
  // 20 calls a minute: the extract takes minutes, status asks while it holds the lock
  const env = orgEnv(sandbox(), out, { PERKS_RATE_LIMIT: '20' });
  const extract = startCli(['extract'], env);
  try {
    for (let i = 0; i < 200 && !existsSync(lockPath(out)); i++) await new Promise((r) => setTimeout(r, 50));
    const running = JSON.parse((await runCli(['status', '--format', 'json'], env)).stdout) as Record<string, unknown>;
    expect(running.in_progress).toMatchObject({ command: 'extract', pid: extract.child.pid, stale: null });
    const text = (await runCli(['status'], env)).stdout;
    expect(text).toContain(`in progress: perks extract (pid ${extract.child.pid} on `);
  } finally {
    extract.child.kill('SIGKILL');
    await extract.done;
  }
  const after = JSON.parse((await runCli(['status', '--format', 'json'], env)).stdout) as Record<string, unknown>;
  expect(after.in_progress).toMatchObject({ stale: `its process ${extract.child.pid} is gone` });
  rmSync(out, { recursive: true, force: true });
}, 60_000);
