/**
 * 14. A daily schedule, as operators run it: `perks run` once a day for weeks against a platform that
 * changes every day (late orders, refunds, users joining, deactivated and anonymised, credit spent),
 * across a month end, with finance closing the month once its data is final. After every run: exit 0,
 * no order missing or held twice, nothing before PERKS_START_DATE (which starts mid-month), and right
 * after each weekly deep re-read no stale order. At the end: every interaction written back stored
 * once on the platform, no personal value of a user anonymised during the schedule anywhere in the
 * output, the closed month's figures as closed plus its adjustments equal to its figures now (per
 * group, currency and status), `perks closes` verifying and `perks status` fresh and naming the close.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { searchOutput } from '../../support/decode.js';
import { compareOrders, groupsAt, lakeOrders, ordersTruth } from '../../support/lake-check.js';
import { orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { octoberCompleteOrders } from '../../close/scenario.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const FIRST_DAY = '2026-10-24';
const START = '2026-09-20';
/** The month finance closes, and the first day its data is final (month end + the 7-day lookback, passed). */
const CLOSE_MONTH = '2026-10';
const CLOSE_ON = '2026-11-09';

interface Day {
  day: string;
  seconds: number;
  calls: number;
  deep: boolean;
  stale: number;
}

const parquetFiles = (dir: string) =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet'));

/** The orders state's deepAt of every group (it moves when a pass is a deep re-read). */
function deepAts(out: string): string {
  const dir = join(out, 'state', 'orders');
  return readdirSync(dir)
    .sort()
    .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { deepAt?: string }).deepAt ?? '')
    .join(',');
}

/** Interactions stored upstream more than once, by interaction_id. */
function storedTwice(sandbox: Sandbox): number {
  const times = new Map<string, number>();
  for (const user of sandbox.world.users.all())
    for (const i of sandbox.world.interactionsOf(user))
      times.set(i.interaction_id, (times.get(i.interaction_id) ?? 0) + 1);
  return [...times.values()].filter((n) => n > 1).length;
}

/**
 * Per group, currency and status of the closed month: as closed + the adjustments' changes − as now.
 * Zero rows when the month's figures reconcile (a status change moves money from its before_status to its
 * after_status).
 */
const RECONCILE = `
WITH closed AS (
  SELECT organisation_group_id AS g, order_currency AS c, order_status AS s, orders_as_closed AS n, group_revenue_as_closed AS r, face_value_as_closed AS f
  FROM revenue_monthly WHERE month = DATE '${CLOSE_MONTH}-01' AND is_closed
), now AS (
  SELECT organisation_group_id AS g, order_currency AS c, order_status AS s, orders AS n, group_revenue AS r, face_value AS f
  FROM revenue_monthly WHERE month = DATE '${CLOSE_MONTH}-01'
), moves AS (
  SELECT organisation_group_id AS g, before_currency AS c, before_status AS s, -1 AS n, -before_group_revenue AS r, -before_face_value AS f
  FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01' AND before_status IS NOT NULL
  UNION ALL
  SELECT organisation_group_id, order_currency, after_status, 1, after_group_revenue, after_face_value
  FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01'
), sides AS (
  SELECT g, c, s, n, r, f FROM closed UNION ALL SELECT g, c, s, n, r, f FROM moves
  UNION ALL SELECT g, c, s, -n, -r, -f FROM now
)
SELECT g, c, s, sum(n) AS orders_off, sum(r) AS revenue_off, sum(f) AS face_value_off FROM sides
WHERE g IN (SELECT g FROM closed) GROUP BY ALL
HAVING sum(n) <> 0 OR sum(r) <> 0 OR sum(f) <> 0 ORDER BY ALL`;

export async function scheduleScenario(o: ScenarioOptions & { days: number }): Promise<Row[]> {
  return withSandbox({ seed: 61, today: FIRST_DAY, lateOrders: 0.3 }, (sandbox) =>
    withScratch('schedule', (scratch) => schedule(sandbox, scratch.dir(), o)),
  );
}

async function schedule(sandbox: Sandbox, out: string, o: ScenarioOptions & { days: number }): Promise<Row[]> {
  const env = (extra: Record<string, string> = {}) => orgEnv(sandbox, out, { PERKS_START_DATE: START, ...extra });
  const problems: string[] = [];
  const days: Day[] = [];
  const anonymised = new Map<number, { email: string; first: string; last: string }>();
  // Who ever held each first + last name pair: a pair two people shared is not searched for (the other
  // person's rows would match it), their e-mails still are.
  const holders = new Map<string, Set<number>>();
  let closed = false;
  for (let d = 0; d < o.days; d++) {
    if (d > 0) {
      sandbox.advance(1);
      const people = new Map(
        [...sandbox.world.users.all()].map((u) => [
          u.id,
          { email: u.email ?? '', first: u.first_name ?? '', last: u.last_name ?? '' },
        ]),
      );
      for (const [id, p] of people)
        if (p.first && p.last)
          holders.set(`${p.first} ${p.last}`, (holders.get(`${p.first} ${p.last}`) ?? new Set()).add(id));
      for (const id of sandbox.churn().anonymised) if (people.get(id)?.email) anonymised.set(id, people.get(id)!);
    }
    const day = sandbox.world.today;
    const deepBefore = d > 0 ? deepAts(out) : '';
    const started = Date.now();
    const run = await runCli(['run', '--quiet'], env());
    const seconds = (Date.now() - started) / 1000;
    if (run.code !== 0) {
      problems.push(`${day}: perks run exited ${run.code}: ${run.stderr.trim().split('\n')[0]?.slice(0, 300)}`);
      break;
    }
    const deep = d > 0 && deepAts(out) !== deepBefore;
    const lake = await lakeOrders(out);
    const orders = compareOrders(
      lake.filter((r) => r.order_date >= START),
      ordersTruth(sandbox, groupsAt(sandbox, new Date(`${day}T12:00:00Z`)), START),
    );
    const early = lake.filter((r) => r.order_date < START).length;
    if (orders.missing || orders.duplicated)
      problems.push(`${day}: ${orders.missing} orders missing, ${orders.duplicated} held twice`);
    if (early) problems.push(`${day}: ${early} orders before PERKS_START_DATE ${START} landed`);
    if (deep && orders.wrong) problems.push(`${day}: ${orders.wrong} orders stale right after a deep re-read`);
    days.push({
      day,
      seconds,
      calls: Number(/api: (\d+) calls/.exec(run.stdout)?.[1] ?? 0),
      deep,
      stale: orders.wrong,
    });
    if (day === CLOSE_ON) {
      const close = await runCli(['close', '--month', CLOSE_MONTH, '--by', 'schedule'], env());
      if (close.code !== 0)
        problems.push(
          `${day}: perks close --month ${CLOSE_MONTH} exited ${close.code}: ${close.stderr.trim().split('\n')[0]}`,
        );
      else closed = true;
      // refunds of closed October orders, weeks after them: beyond the lookback, found by the next deep re-read
      for (const g of sandbox.world.groups)
        for (const i of octoberCompleteOrders(sandbox, g.id, 2)) sandbox.world.orders.setStatus(i, 'Refunded');
    }
    o.log(
      `schedule: ${day} ${seconds.toFixed(1)} s, ${days.at(-1)!.calls} calls${deep ? ' (deep re-read)' : ''}, ${orders.wrong} stale`,
    );
  }

  const twice = storedTwice(sandbox);
  if (twice) problems.push(`${twice} interactions stored twice on the platform`);
  // Every e-mail in one pass over the output; name pairs (a pass each) for the first 12 that name one person.
  for (const p of sandbox.world.users.all())
    if (p.first_name && p.last_name)
      holders.set(
        `${p.first_name} ${p.last_name}`,
        (holders.get(`${p.first_name} ${p.last_name}`) ?? new Set()).add(p.id),
      );
  const emails = await searchOutput(
    out,
    [...anonymised.values()].map((p) => p.email),
  );
  const pairs = [...anonymised.values()].filter((p) => holders.get(`${p.first} ${p.last}`)?.size === 1).slice(0, 12);
  const hitsOf = [emails, ...(await Promise.all(pairs.map((p) => searchOutput(out, [], [p.first, p.last]))))].flatMap(
    (f) => f.hits,
  );
  const hits = hitsOf.length;
  for (const h of hitsOf.slice(0, 5))
    problems.push(`an anonymised user's value is left: ${h.file} (${h.where}) holds ${h.needle}`);
  let adjustments = 0;
  if (closed) {
    const off = await runCli(['sql', RECONCILE, '--format', 'json'], env());
    if (off.code !== 0) problems.push(`the reconciliation query exited ${off.code}: ${off.stderr.trim()}`);
    else
      for (const r of JSON.parse(off.stdout) as unknown[])
        problems.push(`${CLOSE_MONTH} as closed + adjustments ≠ as now: ${JSON.stringify(r)}`);
    const counted = await runCli(
      [
        'sql',
        `SELECT count(*) AS n FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01'`,
        '--format',
        'json',
      ],
      env(),
    );
    adjustments = Number((JSON.parse(counted.stdout || '[{"n":0}]') as { n: number }[])[0].n);
    const verify = await runCli(['closes'], env());
    if (verify.code !== 0) problems.push(`perks closes exited ${verify.code}: ${verify.stderr.trim()}`);
  } else if (days.some((x) => x.day === CLOSE_ON)) problems.push(`${CLOSE_MONTH} was not closed`);
  const status = await runCli(['status'], env({ PERKS_NOW: `${sandbox.world.today}T13:00:00Z` }));
  if (status.code !== 0) problems.push(`perks status exited ${status.code}: ${status.stderr.trim()}`);
  if (closed && !/signed off 2026-10$/m.test(status.stdout))
    problems.push(`perks status does not name the close of ${CLOSE_MONTH}`);

  const orderFiles = parquetFiles(join(out, 'lake', 'orders')).length;
  const allFiles = parquetFiles(join(out, 'lake')).length;
  const ordinary = days.filter((x, i) => i > 0 && !x.deep);
  const deepDays = days.filter((x) => x.deep);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const figure =
    `${days.length} daily runs ${days[0]?.day}..${days.at(-1)?.day}: ${mean(days.map((x) => x.seconds)).toFixed(1)} s a run; calls a day ${mean(ordinary.map((x) => x.calls)).toFixed(0)} ` +
    `(deep re-read days ${deepDays.map((x) => x.calls).join(', ') || 'none'}); stale orders at most ${Math.max(0, ...days.map((x) => x.stale))} between deep re-reads, 0 after; ` +
    `${anonymised.size} anonymised (e-mails and ${pairs.length} name pairs searched): ${hits} values left; ${twice} interactions stored twice; ${CLOSE_MONTH} closed ${closed ? `on ${CLOSE_ON}, ${adjustments} adjustments after it, as closed + adjustments = as now` : 'no'}; lake ${allFiles} files (orders ${orderFiles})`;
  o.log(`schedule: ${figure}`);
  return [row('daily schedule', days.length, problems, figure)];
}
