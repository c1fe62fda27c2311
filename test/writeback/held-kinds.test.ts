import { describe, expect, test } from 'vitest';
import { SYSTEMATIC_REJECTIONS } from '../../src/writeback/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { runCli } from '../support/cli.js';
import { sandboxEnv } from '../support/sandbox.js';
import { sandboxForTest } from '../support/sandbox-hooks.js';
import { prepare, storedTimes, WRITEBACK_SANDBOX } from './fixtures.js';

const BATCH = 4; // posts in flight at once (src/writeback/run.ts)

describe('a systematic write-back rejection', () => {
  test('an unmapped type stops after a few rejections, leaves its rows unsent, and the rerun with the mapping posts every row once', async () => {
    // The platform knows only the types its operator configured: segment_change is not one of them.
    const sandbox = await sandboxForTest({
      ...WRITEBACK_SANDBOX,
      interactionTypes: ['engagement_segment', 'savings_milestone'],
    });
    const { run } = await prepare(sandbox);

    const first = await run();
    const segments = first.by_type.find((t) => t.kind === 'segment_change')!.rows;
    expect(first.status).toBe('partial');
    expect(first.rejected).toBeGreaterThanOrEqual(SYSTEMATIC_REJECTIONS);
    expect(first.rejected).toBeLessThan(SYSTEMATIC_REJECTIONS + BATCH);
    expect(first.held).toEqual([
      {
        kind: 'segment_change',
        interaction_type: 'segment_change',
        http_status: 422,
        message: expect.stringContaining('The selected interaction type is invalid.'),
        rows: segments - first.rejected,
      },
    ]);
    expect(first.sent).toBe(first.rows - segments); // the other kind went through
    // The posts, the token, and (an empty ledger, no interactions extracted) one listing per user to learn what is stored.
    expect(first.calls).toBeLessThanOrEqual(first.sent + first.rejected + 1 + first.learned!.calls);
    expect(first.calls - first.learned!.calls).toBeLessThanOrEqual(first.sent + first.rejected + 1);

    // Same mapping again: the rejected rows stay rejected, the held ones are tried (and held) again.
    const same = await run();
    expect(same.sent).toBe(0);
    expect(same.held[0]?.kind).toBe('segment_change');

    // The right mapping: every segment row is posted exactly once, the rejected ones included.
    const fixed = await run({ types: { segment_change: 'engagement_segment' } });
    expect(fixed).toMatchObject({ status: 'success', held: [], rejected: 0 });
    expect(fixed.sent).toBe(segments);
    const times = storedTimes(sandbox);
    const posted = [...times.entries()].filter(([id]) => Number(id) > 1e12);
    expect(posted.every(([, n]) => n === 1)).toBe(true);
    expect(await run({ types: { segment_change: 'engagement_segment' } })).toMatchObject({ sent: 0, calls: 0 });
  });

  test('perks writeback says in one line which kind was held and what to set, and exits 4', async () => {
    const sandbox = await sandboxForTest({ ...WRITEBACK_SANDBOX, interactionTypes: ['savings_milestone'] });
    const { outDir } = await prepare(sandbox);
    const r = await runCli(['writeback'], sandboxEnv(sandbox, outDir));
    expect(r.code).toBe(ExitCode.partial);
    const held = r.stdout.split('\n').filter((l) => l.includes('held after'));
    expect(held).toHaveLength(1);
    expect(held[0]).toMatch(
      /kind segment_change held after 3 rejections in a row .*: \d+ rows left unsent for the next run; set PERKS_WRITEBACK_TYPES=segment_change=<a type the platform accepts>/,
    );
  });
});
