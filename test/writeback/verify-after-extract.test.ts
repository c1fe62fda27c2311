/**
 * `perks writeback --verify` after a real write-back and a real extract, each its own `perks` process, with no
 * API credentials: only the lake can decide. It decides when the user's interactions were extracted after the
 * row was sent (`_extracted_at` > `attempted_at`), so both stamps must come from one clock kept in order across
 * processes (src/writeback/ledger-clock.ts, src/lake/run-stamps.ts): under a pinned clock every process
 * restarts at the same instant, and the ledger's stamps on the system clock never let the lake decide.
 * One post is answered by a proxy and never reaches the platform: the lake must name it missing.
 */
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runCli, type CliResult } from '../support/cli.js';
import { startProxy } from '../support/proxy.js';
import { orgEnv } from '../support/sandbox.js';
import { sandboxForTest } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { wallClock } from '../support/wall-clock.js';
import { martsFromSandbox, storedTotal, writeMarts } from './fixtures.js';

/** A post of an interaction (not a listing): `/v3/Interactions/{identifier}/{value}`. */
const isPost = (method: string, path: string) => method === 'POST' && /^\/v3\/Interactions\/(?!list\/)/.test(path);

type Step = 'writeback' | 'extract' | 'verify';

/** The three commands, each with the clock `clock(step)` gives it (over orgEnv's: the sandbox's day at noon UTC). */
async function writeBackExtractVerify(sandbox: Sandbox, clock: (step: Step) => Record<string, string>) {
  const outDir = tempOut('perks-verify-');
  // Segment changes only: their interaction_at is the write-back's clock, after the extract's listings begin
  // whatever the day (a milestone's is a fixed month, which a system clock set before it would not list yet).
  await writeMarts(outDir, { users: martsFromSandbox(sandbox).users, savings: [] });
  // The first post is answered 200 as the platform would, and never forwarded: the ledger says sent.
  let lost: number | undefined;
  const proxy = await startProxy(sandbox.baseUrl, {
    intercept: (req) => {
      if (lost !== undefined || !isPost(req.method, req.path)) return undefined;
      lost = (JSON.parse(req.body) as { interaction_id: number }).interaction_id;
      return { respond: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' } };
    },
  });
  const posts = () => proxy.log.filter((e) => isPost(e.method, e.path)).length;
  let writeback: CliResult;
  try {
    writeback = await runCli(['writeback'], {
      ...orgEnv(sandbox, outDir, { PERKS_BASE_URL: proxy.url }),
      ...clock('writeback'),
    });
  } finally {
    await proxy.close();
  }
  const extract = await runCli(['extract', '--quiet', '--streams', 'interactions'], {
    ...orgEnv(sandbox, outDir),
    ...clock('extract'),
  });
  const verify = await runCli(['writeback', '--verify'], { PERKS_OUTPUT: outDir, ...clock('verify') });
  return { writeback, extract, verify, lost, posts: posts() };
}

function expectDecidedByTheLake(r: Awaited<ReturnType<typeof writeBackExtractVerify>>, stored: number) {
  expect(r.writeback.code, r.writeback.stderr).toBe(0);
  expect(r.extract.code, r.extract.stderr).toBe(0);
  expect(r.lost).toBeDefined();
  // every post but the one the proxy kept reached the platform
  expect(stored).toBe(r.posts - 1);
  expect(r.verify.stderr).toContain('no API credentials, checking the landed interactions only');
  expect(r.verify.stdout).toContain(
    `writeback verify: ${r.posts} sent per the ledger, ${r.posts - 1} seen in the landed interactions, 0 seen through the API, 1 missing\n`,
  );
  expect(r.verify.stdout).toMatch(new RegExp(`\\n  missing ${r.lost} \\(.*; checked in the lake\\)\\n`));
  expect(r.verify.stdout).not.toContain('unchecked');
  expect(r.verify.code, r.verify.stdout + r.verify.stderr).toBe(4); // a missing row is exit 4
}

describe('perks writeback --verify after a real write-back and a real extract', () => {
  test('under a pinned clock (every process restarts at the same instant), the lake decides: the rows it holds are seen, the lost one is missing', async () => {
    const sandbox = await sandboxForTest({ seed: 3 });
    // orgEnv pins every command to the sandbox's day at noon UTC
    const r = await writeBackExtractVerify(sandbox, () => ({}));
    expectDecidedByTheLake(r, storedTotal(sandbox));
  });

  test('on the system clock, the lake decides the same', async () => {
    // the platform's day is the system's, as a real platform's is: with the suite's pinned day instead, a system
    // clock far from it (the suite under faketime) leaves the seeded interactions outside the extract's windows,
    // and the lost post's user, with no landed row, undecided
    const sandbox = await sandboxForTest({ seed: 3, today: wallClock().toISOString().slice(0, 10) });
    // empty: the system clock (src/shared/clock.ts)
    const r = await writeBackExtractVerify(sandbox, () => ({ PERKS_NOW: '' }));
    expectDecidedByTheLake(r, storedTotal(sandbox));
  });

  test("with the write-back's clock ahead of the extract's (a clock set back, or a pinned process that got further), the extract stamps after the posts and reads the interactions they carry: the lake decides the same", async () => {
    const sandbox = await sandboxForTest({ seed: 3 });
    const ahead = new Date(Date.parse(`${sandbox.world.today}T12:00:00Z`) + 10 * 60_000).toISOString();
    const r = await writeBackExtractVerify(sandbox, (step): Record<string, string> =>
      step === 'writeback' ? { PERKS_NOW: ahead } : {},
    );
    expectDecidedByTheLake(r, storedTotal(sandbox));
  });
});
