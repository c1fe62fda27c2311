/**
 * Shards 2..N wait for shard 1's hand-off of the day (src/extract/per-user/handoff.ts), up to
 * --shard-wait-minutes. The CLI against the sandbox: the wait's timeout when shard 1 never ran, and
 * no wait at all once shard 1 has handed off.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { shiftDay } from '../../src/extract/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { perksExtract } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { todayUtc } from '../../src/shared/clock.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const TODAY = todayUtc();
const sandbox = sandboxForFile({ seed: 37 });

const env = (out: string) => orgEnv(sandbox(), out, { PERKS_START_DATE: shiftDay(TODAY, -7) });
const REDIS_WARNING = /^perks: warning: --shard 2\/2 without PERKS_REDIS_URL/;

describe('shards 2..N waiting for shard 1 (--shard-wait-minutes)', () => {
  test('shard 2/2 with no shard 1 waits --shard-wait-minutes, then fails with exit code 1 and one line naming the wait, the groups and what to do, having called no per-user endpoint', async () => {
    const out = tempOut('perks-scale-wait-');
    const groups = sandbox().credentials.organisation.organisation_group_ids;
    const started = performance.now();
    const r = await perksExtract(['--quiet', '--shard', '2/2', '--shard-wait-minutes', '0.05'], env(out));
    const ms = performance.now() - started;
    expect(r.code, r.stdout + r.stderr).toBe(ExitCode.failed);
    // 0.05 min = 3 s: it did wait, and stopped at its own limit, not the default 120 min (the bound leaves a
    // busy machine's process start and extract room: it only tells 3 s from hours).
    expect(ms).toBeGreaterThanOrEqual(3_000);
    expect(ms).toBeLessThan(60_000);
    const lines = r.stderr.trim().split('\n');
    // The other line is the documented warning that shards without Redis do not share the rate limit.
    expect(lines.filter((l) => !REDIS_WARNING.test(l))).toEqual([
      `perks: credit: shard 2/2 waited 0.05 min for shard 1/2 to land today's (${TODAY}) users and windows of group(s) ${groups.join(', ')}: start shard 1 of the same round, or raise --shard-wait-minutes`,
    ]);
    expect(r.stdout).toMatch(/^run \S+: error \(shard 2\/2\)/);
    expect(r.stdout).toMatch(/\n {2}credit +error +0 rows +0 calls/);
    expect(r.stdout).toMatch(/\n {2}interactions +skipped +0 rows +0 calls/);
    for (const stream of ['credit', 'interactions']) expect(existsSync(join(out, 'lake', stream)), stream).toBe(false);
  }, 90_000);

  test('once shard 1/2 has handed off today, shard 2/2 proceeds at once, even with --shard-wait-minutes 0, and lands its users; a hand-off of yesterday does not count', async () => {
    const out = tempOut('perks-scale-wait-');
    const one = await perksExtract(['--quiet', '--shard', '1/2'], env(out));
    expect(one.code, one.stdout + one.stderr).toBe(ExitCode.success);
    expect(readdirSync(join(out, 'state', 'shard_handoff')).length).toBe(
      sandbox().credentials.organisation.organisation_group_ids.length,
    );
    // Not quiet: stderr carries one JSON line per event, and a wait would show as a "waiting" event.
    const two = await perksExtract(['--shard', '2/2', '--shard-wait-minutes', '0'], env(out));
    expect(two.code, two.stdout + two.stderr).toBe(ExitCode.success);
    expect(two.stderr).not.toContain('"event":"waiting"');
    expect(two.stdout).toMatch(/^run \S+: success \(shard 2\/2\)/);
    expect(two.stdout).toMatch(/\n {2}credit +success +[1-9]\d* rows/);

    // A hand-off is good for its UTC day only: yesterday's does not let today's shard 2 through.
    const dir = join(out, 'state', 'shard_handoff');
    for (const name of readdirSync(dir)) {
      const handoff = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { day: string };
      writeFileSync(join(dir, name), JSON.stringify({ ...handoff, day: shiftDay(TODAY, -1) }));
    }
    const stale = await perksExtract(['--quiet', '--shard', '2/2', '--shard-wait-minutes', '0'], env(out));
    expect(stale.code, stale.stdout + stale.stderr).toBe(ExitCode.failed);
    expect(stale.stderr).toContain(
      `perks: credit: shard 2/2 waited 0 min for shard 1/2 to land today's (${TODAY}) users and windows`,
    );
  }, 120_000);
});
