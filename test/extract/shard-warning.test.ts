/** `perks extract --shard K/N` without PERKS_REDIS_URL: the shards would not share the rate limit, and the run says so. */
import { describe, expect, test } from 'vitest';
import { unsharedLimitWarning } from '../../src/extract/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';

const sandbox = sandboxForFile({ seed: 29, today: '2026-11-22' });

describe('a shard without a shared rate limit', () => {
  test('perks extract --shard 1/2 without PERKS_REDIS_URL warns once on stderr, even --quiet, and still runs to exit 0', async () => {
    const out = tempOut();
    const r = await runCli(
      ['extract', '--quiet', '--streams', 'groups', '--shard', '1/2'],
      orgEnv(sandbox(), out, { PERKS_START_DATE: '2026-11-15' }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(stderrLines(r)).toEqual([
      'perks: warning: --shard 1/2 without PERKS_REDIS_URL: the 2 shards do not share the rate limit, so each paces at the full limit and together they are throttled (429); set PERKS_REDIS_URL to one Redis for every shard (docs/scale-out.md)',
    ]);
    expect(r.stdout).toMatch(/^run \S+: success \(shard 1\/2\)\n/);
  });

  test('a single shard (1/1), a run without --shard and a --plan print no warning', async () => {
    const out = tempOut();
    const env = orgEnv(sandbox(), out, { PERKS_START_DATE: '2026-11-15' });
    for (const args of [['--shard', '1/1'], [], ['--plan', '--shard', '2/2']]) {
      const r = await runCli(['extract', '--quiet', '--streams', 'groups', ...args], env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
    }
  });

  test('with PERKS_REDIS_URL the shards share one budget, so there is nothing to warn about', () => {
    expect(unsharedLimitWarning({ index: 2, count: 4 }, 'redis://127.0.0.1:6379')).toBeUndefined();
    expect(unsharedLimitWarning({ index: 2, count: 4 }, undefined)).toContain(
      'the 4 shards do not share the rate limit',
    );
  });
});
