import { beforeAll, describe, expect, test } from 'vitest';
import { extract, formatPlan, type Plan } from '../../src/extract/index.js';
import { runCli } from '../support/cli.js';
import { orgConfig, orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const now = new Date(`${TODAY}T12:00:00Z`);
const sandbox = sandboxForFile({ seed: 23, today: TODAY });
/** An output directory whose lake holds today's users snapshot: the per-user streams plan from it. */
let out: string;
let groups: number[];

beforeAll(async () => {
  out = tempOut();
  groups = sandbox().credentials.organisation.organisation_group_ids;
  const landed = await extract(orgConfig(sandbox(), out, { PERKS_START_DATE: '2026-11-15' }), {
    output: outputAt(out),
    now,
    streams: ['users'],
  });
  expect(landed.status).toBe('success');
});

/** The plan of the worker `--shard shard` `--groups only` (whole organisation when both are absent). */
async function planOf(shard?: { index: number; count: number }, only?: number[]): Promise<Plan> {
  const env = { PERKS_START_DATE: '2026-11-15', ...(only ? { PERKS_GROUP_IDS: only.join(',') } : {}) };
  const result = await extract(orgConfig(sandbox(), out, env), {
    output: outputAt(out),
    now,
    planOnly: true,
    shard,
    groupSlice: only !== undefined,
  });
  return result.plan!;
}

const perUserCalls = (plan: Plan) =>
  plan.rows.filter((r) => r.unit === 'users').reduce((n, r) => n + r.estimatedCalls, 0);

describe('extract --plan of one worker', () => {
  test('the per-user calls of shards 1/2 and 2/2 add up to the unsharded plan, and shard 2/2 plans no shared stream', async () => {
    const whole = await planOf();
    const [first, second] = [await planOf({ index: 1, count: 2 }), await planOf({ index: 2, count: 2 })];
    expect(perUserCalls(whole)).toBeGreaterThan(20);
    expect(perUserCalls(first)).toBeGreaterThan(0);
    expect(perUserCalls(second)).toBeGreaterThan(0);
    expect(perUserCalls(first) + perUserCalls(second)).toBe(perUserCalls(whole));
    // Shard 1 lands the shared streams as a single worker would; shard 2 only its users' credit and interactions.
    expect(first.rows.filter((r) => r.unit !== 'users')).toEqual(whole.rows.filter((r) => r.unit !== 'users'));
    expect(new Set(second.rows.map((r) => r.stream))).toEqual(new Set(['credit', 'interactions']));
    expect(second.elsewhere.map((e) => e.stream)).toEqual(['groups', 'users', 'offers', 'orders', 'redemption_stats']);
    expect(second.elsewhere[0].reason).toBe('landed by shard 1/2 (this is shard 2/2)');
    const all = groups.join(', ');
    expect([whole.scope, second.scope]).toEqual([
      `the whole organisation (groups ${all})`,
      `shard 2/2 of every group (groups ${all})`,
    ]);
  });

  test('--groups restricts the plan to those groups, and the offers go to the worker holding the lowest group id', async () => {
    const whole = await planOf();
    const last = Math.max(...groups);
    const slice = await planOf(undefined, [last]);
    expect(new Set(slice.rows.map((r) => r.group))).toEqual(new Set([last]));
    expect(slice.elsewhere).toEqual([
      { stream: 'offers', reason: 'organisation-wide: landed by the --groups worker holding the lowest group id' },
    ]);
    // The slice's rows are the whole plan's rows of that group: same windows, same users.
    expect(slice.rows.filter((r) => r.stream !== 'groups')).toEqual(
      whole.rows.filter((r) => r.group === last && r.stream !== 'groups'),
    );
    expect(slice.scope).toBe(`group ${last}`);
  });

  test("perks extract --plan --shard 2/2 --groups G prints that worker's plan and says so in its header", async () => {
    const g = Math.min(...groups);
    const expected = await planOf({ index: 2, count: 2 }, [g]);
    const r = await runCli(
      ['extract', '--plan', '--shard', '2/2', '--groups', String(g)],
      orgEnv(sandbox(), out, { PERKS_START_DATE: '2026-11-15' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `plan for shard 2/2 of group ${g}, nothing extracted; calls made to plan it: /v3/group/list (1)`,
    );
    const rows = lines.filter((l) => /^\s+\w+\s+group\s/.test(l));
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 4))).toEqual(
      expected.rows.map((e) => [e.stream, 'group', String(e.group), String(e.units)]),
    );
    expect(lines.filter((l) => l.includes('not here: landed by shard 1/2'))).toHaveLength(5);
    expect(lines.at(-1)).toContain(`total ~${perUserCalls(expected)} calls`);
  });

  test("on an empty output directory the plan counts each group's users by the first page of the users listing, says so, and plans the calls the run then makes", async () => {
    const empty = tempOut();
    const config = orgConfig(sandbox(), empty, { PERKS_START_DATE: '2026-11-15' });
    const plan = (await extract(config, { output: outputAt(empty), now, planOnly: true })).plan!;
    expect(plan.usersFromListing).toEqual(groups);
    expect(plan.calls).toEqual([
      { path: '/v3/group/list', calls: 1 },
      { path: '/v3/user/list', calls: groups.length },
    ]);
    const text = formatPlan(plan, 120);
    expect(text.split('\n')[0]).toBe(
      `plan for the whole organisation (groups ${groups.join(', ')}), nothing extracted; calls made to plan it: /v3/group/list (1), /v3/user/list (${groups.length})`,
    );
    expect(text).toContain(
      `  users of groups ${groups.join(', ')}: none landed yet, estimated from the first page of /v3/user/list (its total); one call per user assumed\n`,
    );

    const run = await extract(config, { output: outputAt(empty), now });
    expect(run.status).toBe('success');
    const planned = (stream: string) =>
      plan.rows.filter((r) => r.stream === stream).reduce((n, r) => n + r.estimatedCalls, 0);
    const made = (stream: string) => run.streams.find((s) => s.name === stream)!.calls;
    for (const stream of ['users', 'orders', 'redemption_stats', 'credit'])
      expect(planned(stream), stream).toBe(made(stream));
    expect(planned('credit')).toBe(run.streams.find((s) => s.name === 'users')!.rows);
    // One interactions call per user is planned; a user with more than a page of them takes more.
    expect(planned('interactions')).toBe(planned('credit'));
    expect(made('interactions')).toBeGreaterThanOrEqual(planned('interactions'));
    const total = plan.rows.reduce((n, r) => n + r.estimatedCalls, 0);
    expect(total).toBeGreaterThan(0.95 * (run.api.calls - 2));
  });
});
