import { mkdir, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { acquireWorkLock, scopeKey, type WorkScope } from '../../src/extract/index.js';
import { LockedError } from '../../src/lake/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { now } from '../../src/shared/clock.js';
import { processIdentity } from '../../src/shared/process-identity.js';
import { tempOut } from '../support/scratch.js';

const out = () => tempOut('perks-scale-lock-');
const shard = (index: number, count: number): WorkScope => ({ shard: { index, count } });

async function refused(outDir: string, scope: WorkScope): Promise<LockedError> {
  const err = await acquireWorkLock(outDir, scope).then(
    async (lock) => {
      await lock.release();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LockedError);
  return err as LockedError;
}

describe('locks scoped to what a worker writes', () => {
  test('two runs of the same shard exclude each other, while the other shards of the round run beside them', async () => {
    const dir = out();
    const one = await acquireWorkLock(dir, shard(1, 2));
    const two = await acquireWorkLock(dir, shard(2, 2));
    const again = await refused(dir, shard(1, 2));
    expect(again.exitCode).toBe(ExitCode.locked);
    expect(again.message).toContain(
      `shard 1/2 of every group in output directory ${dir} is in use by another run (pid ${process.pid}`,
    );
    await one.release();
    const afterwards = await acquireWorkLock(dir, shard(1, 2));
    await Promise.all([afterwards.release(), two.release()]);
  });

  test('a run of the whole organisation and any shard exclude each other, whichever comes first', async () => {
    const dir = out();
    const whole = await acquireWorkLock(dir, {});
    expect((await refused(dir, shard(2, 3))).message).toMatch(/overlaps the whole organisation, held by another run/);
    await whole.release();
    const worker = await acquireWorkLock(dir, shard(2, 3));
    expect((await refused(dir, {})).message).toMatch(
      /the whole organisation in output directory .* overlaps shard 2\/3 of every group/,
    );
    // Another split of the same users (1/2 and 2/3 share users) is refused too.
    await refused(dir, shard(1, 2));
    await worker.release();
  });

  test('workers on disjoint --groups share the directory; a worker whose groups overlap is refused', async () => {
    const dir = out();
    const a = await acquireWorkLock(dir, { groups: [11, 12] });
    const b = await acquireWorkLock(dir, { groups: [13] });
    const c = await acquireWorkLock(dir, { groups: [12, 11], shard: { index: 2, count: 2 } }).catch((e: unknown) => e);
    expect(c).toBeInstanceOf(LockedError);
    expect((c as Error).message).toContain('overlaps groups 11, 12');
    await Promise.all([a.release(), b.release()]);
  });

  test("a dead worker's lock does not block the next run of its shard", async () => {
    const dir = out();
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const scope = shard(1, 2);
    const lockDir = join(dir, '.locks', scopeKey(scope));
    await mkdir(lockDir, { recursive: true });
    const at = now().toISOString();
    await writeFile(
      join(lockDir, '.perks.lock'),
      JSON.stringify({ ...processIdentity(), pid: dead, started_at: at, heartbeat_at: at, token: 'dead' }),
    );
    await writeFile(join(lockDir, 'scope.json'), JSON.stringify(scope));
    // Neither the whole organisation nor the same shard is blocked by it.
    const whole = await acquireWorkLock(dir, {});
    await whole.release();
    const lock = await acquireWorkLock(dir, scope);
    await lock.release();
  });
});
