import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { processIdentity } from '../../src/shared/process-identity.js';
import { ensureLakeDir, finishSwitch, journalPath, readJournal, writeJsonAtomic } from '../../src/lake/index.js';
import { tempOut } from '../support/scratch.js';
import { wallClock } from '../support/wall-clock.js';
import { ROOT } from './helpers.js';

function switcher(out: string, name: string, n: number): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'test/lake/fixtures/switcher.ts'), out, name, String(n)],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return new Promise((resolve) => child.once('exit', resolve));
}

test('switches of two processes on one lake take turns: the journal counts every one and ends with none under way', async () => {
  const out = tempOut();
  for (const name of ['a', 'b']) {
    await ensureLakeDir(out, join(out, 'lake', 'x', `worker=${name}`));
    writeFileSync(join(out, 'lake', 'x', `worker=${name}`, 'seed.parquet'), 'seed');
  }
  expect(await Promise.all([switcher(out, 'a', 40), switcher(out, 'b', 40)])).toEqual([0, 0]);
  // Each switch turned the generation odd then even: two per switch, none lost to the other process.
  expect(readJournal(out)).toEqual({ generation: 2 * 80, switching: null });
  for (const name of ['a', 'b'])
    expect(readdirSync(join(out, 'lake', 'x', `worker=${name}`)).filter((f) => !f.startsWith('.'))).toEqual([
      expect.stringMatching(/^part\.v[0-9a-f]{12}\.parquet$/),
    ]);
}, 180_000);

test('a switch a killed process left is finished by the next one to look, through its dead lock', async () => {
  const out = tempOut();
  const dir = join(out, 'lake', 'x');
  await ensureLakeDir(out, dir);
  writeFileSync(join(dir, 'old.parquet'), 'old');
  writeFileSync(join(dir, 'new.parquet'), 'new');
  await writeJsonAtomic(journalPath(out), {
    generation: 3,
    switching: { stream: 'x', target: 'x/new.parquet', inputs: ['x/old.parquet'], dirs: [] },
  });
  // The killed process's journal lock: its pid is gone.
  await ensureLakeDir(out, join(out, 'lake', '.journal'));
  const dead = {
    ...processIdentity(), // this host, boot and PID namespace: a pid gone here is certainly dead
    pid: 2 ** 22 + 7,
    started_at: '',
    heartbeat_at: wallClock().toISOString(),
    token: 'dead',
  };
  writeFileSync(join(out, 'lake', '.journal', '.perks.lock'), JSON.stringify(dead));
  expect(await finishSwitch(out)).toBe(true);
  expect(existsSync(join(dir, 'old.parquet'))).toBe(false);
  expect(existsSync(join(dir, 'new.parquet'))).toBe(true);
  expect(readJournal(out)).toEqual({ generation: 4, switching: null });
});
