import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { WritebackRow } from '../../src/writeback/index.js';
import { sandboxEnv } from '../support/sandbox.js';
import { prepare, sandboxPerTest, storedTimes, storedTotal, writePendingJournal } from './fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sandbox = sandboxPerTest();

async function setup() {
  const prepared = await prepare(sandbox());
  // Every row the models produce, before anything is sent.
  const rows = (await prepared.run({ dryRun: true, previewRows: 100_000 })).preview;
  return { ...prepared, rows };
}

function expectEachStoredOnce(rows: WritebackRow[]) {
  const times = storedTimes(sandbox());
  const wrong = rows
    .filter((r) => times.get(String(r.interaction_id)) !== 1)
    .map((r) => [r.interaction_id, times.get(String(r.interaction_id)) ?? 0]);
  expect(wrong).toEqual([]);
}

describe('exactly once across crashes', () => {
  test('a pending row the server stored is found upstream and not posted again; one it never got is posted', async () => {
    const { outDir, client, run, rows } = await setup();
    const [storedBeforeCrash, lostBeforeCrash] = rows;
    // The crash window: the post reached the server, the process died before recording the answer.
    await client.call('createInteraction', {
      path: { identifier: storedBeforeCrash.identifier, identifier_value: storedBeforeCrash.identifier_value },
      body: {
        interaction_id: storedBeforeCrash.interaction_id,
        interaction_type: storedBeforeCrash.interaction_type,
        interaction_at: storedBeforeCrash.interaction_at,
        interaction_details: storedBeforeCrash.interaction_details,
      },
      group: storedBeforeCrash.organisation_group_id,
    });
    // Two durable pending entries and a line torn by the crash.
    writePendingJournal(outDir, [storedBeforeCrash, lostBeforeCrash], '{"interaction_id":12');

    const result = await run();
    expect(result).toMatchObject({ recovered_pending: 1, reposted_pending: 1, sent: rows.length - 1, rejected: 0 });
    expectEachStoredOnce(rows);
  });

  test('killed with SIGKILL in the middle of a run, the rerun leaves every row stored exactly once', async () => {
    const { outDir, run, rows } = await setup();
    const before = storedTotal(sandbox());
    // 10 calls a second, so the run is still going when it is killed.
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/perks.mjs'), 'writeback'], {
      cwd: ROOT,
      env: { ...process.env, ...sandboxEnv(sandbox(), outDir, 600) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    const deadline = performance.now() + 45_000;
    while (storedTotal(sandbox()) - before < 10 && performance.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    expect(await exited, stderr).toBe('SIGKILL');
    const storedByChild = storedTotal(sandbox()) - before;
    expect(storedByChild).toBeGreaterThanOrEqual(10);
    expect(storedByChild).toBeLessThan(rows.length);

    const rerun = await run();
    // The killed run left its last batch announced but unanswered.
    expect(rerun.recovered_pending + rerun.reposted_pending).toBeGreaterThan(0);
    expect(storedTotal(sandbox()) - before).toBe(rows.length);
    expectEachStoredOnce(rows);
    expect((await run()).sent).toBe(0);
  });

  test('answers cut off or lost to server errors never get a row stored twice', async () => {
    const { run, rows } = await setup();
    sandbox().setFaults({ truncateRate: 0.25, errorRate: 0.15 });
    try {
      const result = await run();
      expect(result).toMatchObject({ sent: rows.length, rejected: 0 });
    } finally {
      sandbox().setFaults({ truncateRate: 0, errorRate: 0 });
    }
    expect(sandbox().stats().faults.truncations).toBeGreaterThan(0);
    expectEachStoredOnce(rows);
  });
});
