/**
 * 13. Right twice: a full `perks run`, then the platform changes without the day moving (late orders
 * of recent days, refunds, users joining, deactivated and anonymised, credit spent: the sandbox's
 * churn), then a second `perks extract` + `perks build` the same day (optionally with a tight budget,
 * or killed at a named point and rerun, or on the next day). The output is then compared with the
 * sandbox's own state: orders (none missing, no stale status), the credit of every user with a visible
 * signal, and no personal value of an anonymised user anywhere in the output directory.
 */
import { join } from 'node:path';
import { withLakeConnection } from '../../../src/lake/index.js';
import type { ChurnReport, Sandbox } from '../../../src/sandbox/index.js';
import { CRASH_ENV, type ExtractCrashPoint } from '../../../src/shared/crash-points.js';
import { runCli } from '../../support/cli.js';
import { searchOutput } from '../../support/decode.js';
import { compareOrders, groupsAt, lakeOrders, leftovers, ordersTruth } from '../../support/lake-check.js';
import { orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const TODAY = '2026-11-22';
const START = '2026-10-20';

export interface SecondRun {
  name: string;
  /** Minutes of per-user budget for both runs (at the test's rate limit): the first leaves a backlog. */
  budgetMinutes?: number;
  /** Kill the second extract at this point (its n-th pass), then rerun it. */
  crashAt?: `${ExtractCrashPoint}:${number}`;
  /** The second run is on the next day (the sandbox moves a day before churning). */
  nextDay?: boolean;
  /** The second extract is done by workers of these group slices (`--groups`), one after the other. */
  slices?: string[];
}

export const SECOND_RUNS: SecondRun[] = [
  { name: 'same day' },
  // 0.0006 min x 100,000 calls/min / 2 streams = 30 calls a stream: the first run leaves 70 of 100 users
  // as a backlog; the second must spend its 30 on the users with a signal (about 25) before that backlog.
  { name: 'same day, tight budget', budgetMinutes: 0.0006 },
  { name: 'same day, killed after a page', crashAt: 'after-page:3' },
  { name: 'same day, killed after a rename', crashAt: 'after-rename:6' },
  { name: 'same day, killed after a state write', crashAt: 'after-state:4' },
  { name: 'same day, killed writing Parquet', crashAt: 'mid-parquet:5' },
  { name: 'same day, killed before a rename', crashAt: 'before-rename:5' },
  { name: 'same day, killed before unlocking', crashAt: 'before-unlock:1' },
  { name: 'next day', nextDay: true },
  { name: 'same day, two --groups workers', slices: ['11,12', '13,14'] },
];

interface Person {
  id: number;
  email: string;
  first: string;
  last: string;
}

export async function rightTwiceScenario(o: ScenarioOptions & { runs?: string[] }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const second of SECOND_RUNS.filter((r) => !o.runs || o.runs.includes(r.name))) {
    rows.push(
      await withSandbox({ seed: 61, today: TODAY, lateOrders: 0.3 }, (sandbox) =>
        withScratch('right-twice', (scratch) => twice(sandbox, scratch.dir(), second, o)),
      ),
    );
  }
  return rows;
}

async function twice(sandbox: Sandbox, out: string, second: SecondRun, o: ScenarioOptions): Promise<Row> {
  const problems: string[] = [];
  const env = (extra: Record<string, string> = {}) => orgEnv(sandbox, out, { PERKS_START_DATE: START, ...extra });
  const budget = second.budgetMinutes !== undefined ? ['--budget-minutes', String(second.budgetMinutes)] : [];
  const first = await runCli(['run', '--quiet', ...budget], env());
  if (first.code !== 0)
    return row(
      `right twice: ${second.name}`,
      1,
      [`the first run exited ${first.code}: ${first.stderr.trim().slice(0, 300)}`],
      'not measured',
    );

  if (second.nextDay) sandbox.advance(1);
  const people = new Map(
    [...sandbox.world.users.all()].map((u) => [
      u.id,
      { id: u.id, email: u.email ?? '', first: u.first_name ?? '', last: u.last_name ?? '' } satisfies Person,
    ]),
  );
  const change = sandbox.churn();

  const extractArgs = ['extract', '--quiet', ...budget];
  let calls = 0;
  if (second.crashAt) {
    const killed = await runCli(extractArgs, env({ [CRASH_ENV]: second.crashAt }));
    if (killed.signal !== 'SIGKILL')
      problems.push(`the second extract was not killed at ${second.crashAt} (exit ${killed.code})`);
  }
  for (const slice of second.slices ?? [undefined]) {
    const again = await runCli([...extractArgs, ...(slice ? ['--groups', slice] : [])], env());
    if (again.code !== 0)
      problems.push(
        `the second extract${slice ? ` of groups ${slice}` : ''} exited ${again.code}: ${again.stderr.trim().slice(0, 300)}`,
      );
    calls += Number(/api: (\d+) calls/.exec(again.stdout)?.[1] ?? 0);
  }
  const build = await runCli(['build', '--quiet'], env());
  if (build.code !== 0) problems.push(`the build exited ${build.code}: ${build.stderr.trim().slice(0, 300)}`);

  // Orders: the lake equals the platform's own orders now (late ones in, refunds seen).
  const now = new Date(`${sandbox.world.today}T12:00:00Z`);
  const orders = compareOrders(await lakeOrders(out), ordersTruth(sandbox, groupsAt(sandbox, now), START));
  if (orders.missing) problems.push(`${orders.missing} orders missing`);
  if (orders.wrong) problems.push(`${orders.wrong} orders stale or wrong`);
  if (orders.duplicated) problems.push(`${orders.duplicated} orders held twice`);
  const late = change.lateOrders.length;
  const refunded = change.refunded.length;

  // Credit: every user with a visible signal is fresh.
  const signalled = signals(sandbox, change);
  const stale = await staleCredit(sandbox, out, signalled);
  if (stale.length)
    problems.push(
      `credit stale for ${stale.length} of ${signalled.length} users with a signal (${stale.slice(0, 5).join(', ')})`,
    );

  // Personal data: no value of an anonymised user anywhere.
  const gone = change.anonymised.map((id) => people.get(id)!).filter((p) => p.email);
  let hits = 0;
  for (const p of gone) {
    const found = await searchOutput(out, [p.email], [p.first, p.last]);
    hits += found.hits.length;
    for (const h of found.hits.slice(0, 2))
      problems.push(`user ${p.id} anonymised: ${h.file} (${h.where}) still holds ${h.needle}`);
  }
  if (leftovers(out).length) problems.push(`temporary files left: ${leftovers(out).slice(0, 2).join(', ')}`);
  const figure = `${late} late + ${refunded} refunded orders: ${orders.missing} missing, ${orders.wrong} stale; credit fresh for ${signalled.length - stale.length}/${signalled.length} signalled users; ${gone.length} anonymised: ${hits} values left; second extract ${calls} calls`;
  o.log(`right twice (${second.name}): ${figure}`);
  return row(`right twice: ${second.name}`, 1, problems, figure);
}

/** Users whose credit the change can have moved, as the data shows it: new or changed orders (late, refunded), new, deactivated, anonymised. */
function signals(sandbox: Sandbox, change: ChurnReport): number[] {
  const ordered = [...change.lateOrders, ...change.refunded].map((id) => sandbox.world.orderById(id)!.user_id);
  return [
    ...new Set([...ordered, ...change.creditSpent, ...change.newUsers, ...change.deactivated, ...change.anonymised]),
  ].sort((a, b) => a - b);
}

/** The users whose latest landed credit differs from the platform's (minor units). */
async function staleCredit(sandbox: Sandbox, out: string, ids: number[]): Promise<number[]> {
  const landed = await withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT user_id::BIGINT AS id, round(available * 100)::BIGINT AS available, round(spent * 100)::BIGINT AS spent
       FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)
       QUALIFY row_number() OVER (PARTITION BY user_id ORDER BY _extracted_at DESC) = 1`,
      { glob: join(out, 'lake', 'credit', '**', '*.parquet') },
    );
    const rows = r.getRowObjectsJS() as Record<'id' | 'available' | 'spent', bigint>[];
    return new Map(rows.map((x) => [Number(x.id), `${x.available}/${x.spent}`]));
  });
  return ids.filter((id) => {
    const credit = sandbox.world.creditOf(sandbox.world.users.get(id)!);
    return landed.get(id) !== `${credit.available}/${credit.spent}`;
  });
}
