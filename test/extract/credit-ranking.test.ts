import { expect, test } from 'vitest';
import { extract, formatExtractSummary } from '../../src/extract/index.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const LATER = '2026-12-12';

test('users whose credit items expired since their last read rank as expiring, in --plan and in the run summary', async () => {
  await withSandbox({ today: TODAY, seed: 29 }, async (sandbox) => {
    const out = tempOut('perks-ranking-');
    const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-11-20' });
    const first = await extract(config, {
      output: outputAt(out),
      now: new Date(`${TODAY}T12:00:00Z`),
      streams: ['users', 'credit'],
    });
    expect(first.status).toBe('success');
    // What the read listed Available and expires by the later run's noon: the lake shows it, no call needed.
    const later = new Date(`${LATER}T12:00:00Z`);
    const expiring = new Set(
      [...sandbox.world.users.all()].flatMap((u) =>
        sandbox.world.creditOf(u).credits.some((i) => i.status === 'Available' && i.expires_at <= later.getTime())
          ? [u.id]
          : [],
      ),
    );
    expect(expiring.size).toBeGreaterThan(0);

    sandbox.world.clock.advance(20);
    const planned = await extract(config, {
      output: outputAt(out),
      now: later,
      streams: ['users', 'credit'],
      planOnly: true,
    });
    const credit = planned.plan!.rows.filter((r) => r.stream === 'credit');
    const planCount = credit.reduce((n, r) => n + Number(/expiring (\d+)\/0/.exec(r.detail)?.[1] ?? 0), 0);
    expect(planCount).toBe(expiring.size);

    const run = await extract(config, { output: outputAt(out), now: later, streams: ['users', 'credit'] });
    expect(run.status).toBe('success');
    const summary = formatExtractSummary(run);
    expect(summary).toMatch(new RegExp(`users by rank, served/waiting: .*expiring ${expiring.size}/0`));
    // the refresh confirmed the expiries: the ranks are empty on the next plan
    const after = await extract(config, {
      output: outputAt(out),
      now: later,
      streams: ['users', 'credit'],
      planOnly: true,
    });
    expect(
      after
        .plan!.rows.filter((r) => r.stream === 'credit')
        .map((r) => r.detail)
        .join(),
    ).not.toMatch(/expiring/);
  });
}, 300_000);
