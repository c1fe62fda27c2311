import fs from 'node:fs';
import { describe, expect, onTestFinished, test } from 'vitest';
import { runCli } from '../support/cli.js';
import { orgEnv, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { prepare, sandboxPerTest, storedTimes, writeMarts } from './fixtures.js';
import { runWriteback } from '../../src/writeback/index.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxPerTest();
const ours = (times: Map<string, number>) => [...times.entries()].filter(([id]) => Number(id) > 1e12);

describe('losing the local records never duplicates upstream', () => {
  test('a fresh output directory with an empty ledger learns what is stored by listing the users, and posts nothing twice', async () => {
    const { run, marts, config, client } = await prepare(sandbox());
    const first = await run();
    expect(first.sent).toBeGreaterThan(0);

    // The CI cache was evicted: same marts, new output directory, no ledger.
    const fresh = tempOut();
    await writeMarts(fresh, marts);
    const again = await runWriteback({
      output: outputAt(fresh),
      client,
      config,
      pendingGraceMs: 0,
      minRetryDelayMs: 5,
    });
    expect(again).toMatchObject({ sent: 0, rejected: 0 });
    expect(again.learned).toMatchObject({ reason: 'ledger empty', fromApi: first.sent, fromLake: 0 });
    expect(again.learned!.usersListed).toBeGreaterThan(0);
    expect(ours(storedTimes(sandbox())).every(([, n]) => n === 1)).toBe(true);
    // The ledger now knows them: a third run asks nothing.
    expect(await runWriteback({ output: outputAt(fresh), client, config, pendingGraceMs: 0 })).toMatchObject({
      sent: 0,
      calls: 0,
    });
  });

  test('perks run, the output directory deleted, perks run again: 0 duplicates upstream, learned from the extracted interactions', async () => {
    await withSandbox({ seed: 5, today: '2026-11-22' }, async (sb) => {
      const out = tempOut();
      onTestFinished(() => fs.rmSync(out, { recursive: true, force: true }));
      const env = orgEnv(sb, out, { PERKS_START_DATE: '2026-09-01' });
      const first = await runCli(['run', '--quiet'], env);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      const sent = ours(storedTimes(sb)).length;
      expect(sent).toBeGreaterThan(0);

      fs.rmSync(out, { recursive: true, force: true });
      fs.mkdirSync(out);
      // An hour later (the clock moves on between two scheduled runs).
      const second = await runCli(['run', '--quiet'], { ...env, PERKS_NOW: '2026-11-22T13:00:00Z' });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/writeback +success .* 0 sent, 0 rejected/);
      const times = ours(storedTimes(sb));
      expect(times.filter(([, n]) => n > 1)).toEqual([]);
      expect(times.length).toBe(sent);
    });
  }, 300_000);
});
