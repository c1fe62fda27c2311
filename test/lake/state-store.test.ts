import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { CorruptStateError, StateStore, UnsafePathError } from '../../src/lake/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { tempOut } from '../support/scratch.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('the state store', () => {
  test('a written value reads back; a missing one is undefined', async () => {
    const state = new StateStore(tempOut());
    expect(await state.read('orders', '11')).toBeUndefined();
    await state.write('orders', '11', { watermark: '2026-11-02', pass: { done: ['2026-11-01'] } });
    expect(await state.read('orders', '11')).toEqual({ watermark: '2026-11-02', pass: { done: ['2026-11-01'] } });
  });

  test("the extract's states: snake_case in the file, camelCase in the code, an older camelCase file still read", async () => {
    const out = tempOut();
    const state = new StateStore(out, { snakeCaseFile: true });
    const value = {
      watermark: '2026-11-02',
      firstDay: '2026-10-01',
      lookbackDays: 7,
      users: { '42': { at: 'x', fp: 'y' } },
    };
    await state.write('orders', '11', value);
    expect(JSON.parse(await readFile(join(out, 'state', 'orders', '11.json'), 'utf8'))).toEqual({
      watermark: '2026-11-02',
      first_day: '2026-10-01',
      lookback_days: 7,
      users: { '42': { at: 'x', fp: 'y' } },
    });
    expect(await state.read('orders', '11')).toEqual(value);
    // a file the previous release wrote
    await writeFile(
      join(out, 'state', 'orders', '12.json'),
      JSON.stringify({ firstDay: '2026-09-01', deepAt: '2026-11-01' }),
    );
    expect(await state.read('orders', '12')).toEqual({ firstDay: '2026-09-01', deepAt: '2026-11-01' });
  });

  test('writes are atomic replacements: the file is whole and no temporary file stays behind', async () => {
    const out = tempOut();
    const state = new StateStore(out);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => state.write('orders', '11', { n: i, pad: 'x'.repeat(10_000) })),
    );
    const value = (await state.read('orders', '11')) as { n: number };
    expect(value.n).toBeGreaterThanOrEqual(0);
    expect(await readdir(join(out, 'state', 'orders'))).toEqual(['11.json']);
  });

  test('files are 0600 in 0700 folders, and looser existing modes are tightened', async () => {
    const out = tempOut();
    await mkdir(join(out, 'state', 'users'), { recursive: true, mode: 0o777 });
    await chmod(join(out, 'state'), 0o755);
    await chmod(join(out, 'state', 'users'), 0o777);
    await writeFile(join(out, 'state', 'users', '11.json'), '{"a":1}', { mode: 0o644 });
    const state = new StateStore(out);
    await state.write('orders', '12', { watermark: '2026-11-02' });
    expect(await modeOf(join(out, 'state'))).toBe(0o700);
    expect(await modeOf(join(out, 'state', 'orders'))).toBe(0o700);
    expect(await modeOf(join(out, 'state', 'orders', '12.json'))).toBe(0o600);
    expect(await modeOf(join(out, 'state', 'users'))).toBe(0o700);
    expect(await modeOf(join(out, 'state', 'users', '11.json'))).toBe(0o600);
  });

  test('a corrupt state file stops with one line naming the file and what to do, exit code 2', async () => {
    const out = tempOut();
    await mkdir(join(out, 'state', 'orders'), { recursive: true });
    const file = join(out, 'state', 'orders', '11.json');
    await writeFile(file, '{"watermark": "2026-11-0');
    const error = await new StateStore(out).read('orders', '11').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptStateError);
    expect((error as CorruptStateError).exitCode).toBe(ExitCode.config);
    expect((error as Error).message).toBe(
      `state file ${file} is corrupt (not valid JSON): delete it to re-extract that stream and group from the start date, or rerun with --full-refresh`,
    );
    expect((error as Error).message).not.toContain('\n');
  });

  test("an empty file, or one that fails the caller's schema, is corrupt too", async () => {
    const out = tempOut();
    const state = new StateStore(out);
    await state.write('orders', '11', { watermark: 42 });
    await expect(state.read('orders', '11', z.object({ watermark: z.string() }))).rejects.toThrow(
      /corrupt \(watermark: Invalid input: expected string, received number\)/,
    );
    await writeFile(join(out, 'state', 'orders', '12.json'), '');
    await expect(state.read('orders', '12')).rejects.toThrow(/corrupt \(empty\)/);
  });

  test('a group key that is not a safe file name is refused', async () => {
    const state = new StateStore(tempOut());
    await expect(state.write('orders', '../../etc/x', {})).rejects.toThrow(UnsafePathError);
    await expect(state.read('orders', 'a/b')).rejects.toThrow(UnsafePathError);
  });

  test('the stored text is plain JSON a person can read', async () => {
    const out = tempOut();
    await new StateStore(out).write('credit', 'all', { users: { '5': '2026-11-01' } });
    expect(JSON.parse(await readFile(join(out, 'state', 'credit', 'all.json'), 'utf8'))).toEqual({
      users: { '5': '2026-11-01' },
    });
  });
});
