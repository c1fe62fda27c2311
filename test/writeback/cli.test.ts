import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { martsFromSandbox, sandboxEnv, sandboxPerTest, storedTotal, tempOut, writeMarts } from './fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sandbox = sandboxPerTest();

function perks(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/perks.mjs'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the perks writeback command', () => {
  test('--dry-run prints counts per type and the first rows, sends nothing, and never prints the secret', async () => {
    const outDir = tempOut();
    await writeMarts(outDir, martsFromSandbox(sandbox()));
    const env = sandboxEnv(sandbox(), outDir);
    const r = await perks(['writeback', '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/writeback dry run: \d+ rows from the models, \d+ to send.*nothing sent/);
    expect(r.stdout).toMatch(/segment_change\s+segment_change\s+\d+\s+\d+/);
    expect(r.stdout).toMatch(/first 10 rows:\n {2}\d+ {2}group \d+ {2}id=\d+/);
    expect(r.stdout + r.stderr).not.toContain(env.PERKS_CLIENT_SECRET);
    expect(sandbox().stats().calls).toBe(0);
  });

  test('rows the platform rejects make the exit status 4, after the others are sent', async () => {
    const outDir = tempOut();
    const marts = martsFromSandbox(sandbox());
    marts.users.push({ organisation_group_id: 11, user_id: 987_654_321, segment: 'active' });
    await writeMarts(outDir, marts);
    const r = await perks(['writeback'], sandboxEnv(sandbox(), outDir));
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toMatch(/partial: \d+ sent, 1 rejected/);
    expect(r.stdout).toMatch(/rejected \d+ \(segment_change, user 987654321\): .*HTTP 404/);
    expect(storedTotal(sandbox())).toBe(marts.users.length - 1 + marts.savings.length / 2);
  });

  test('a bad --limit or PERKS_WRITEBACK_TYPES is one line and exit status 2', async () => {
    const outDir = tempOut();
    const env = sandboxEnv(sandbox(), outDir);
    const limit = await perks(['writeback', '--limit', '-3'], env);
    expect(limit.code).toBe(2);
    expect(limit.stderr.trim().split('\n')).toEqual(['perks: --limit=-3 is invalid: expected a whole number of rows, 0 or more']);
    const types = await perks(['writeback', '--dry-run'], { ...env, PERKS_WRITEBACK_TYPES: 'segment_change' });
    expect(types.code).toBe(2);
    expect(types.stderr).toMatch(/^perks: PERKS_WRITEBACK_TYPES="segment_change" is invalid: expected kind=type pairs/);
  });
});
