/**
 * 14. A daily schedule, as operators run it: `perks run` once a day for weeks against a platform that
 * changes every day (late orders, refunds, disputes with a status never seen before, revenue corrections,
 * Pending orders settling, users joining, deactivated and anonymised, credit spent), across a month end,
 * with finance closing the month: one group on day 1 while October is still provisional (--force, Pending
 * orders in it), reopened and closed again four days later, the others once October is final; the rates
 * file (PERKS_FX_RATES) changes after each close. After every run: exit 0 (a build warning would be 4), no
 * order missing or held twice, nothing before PERKS_START_DATE (which starts mid-month), and right
 * after each weekly deep re-read no stale order. At the end: every interaction written back stored
 * once on the platform, no personal value of a user anonymised during the schedule anywhere in the
 * output, each closed group's figures as closed plus its adjustments equal to its figures now (per
 * currency and status), every adjustment booked in the open month, the closed report of the day-1 group
 * byte for byte as its second close left it, `perks closes` verifying and `perks status` fresh and naming
 * the closes.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
/** Day 1: the first group closes October while it is provisional (--force); reopened and closed again later. */
const EARLY_CLOSE_ON = '2026-11-01';
const REOPEN_ON = '2026-11-12';
const EARLY = 11;

/** Rates of October into EUR, `shift` moving them (the file changes after each close). */
const rates = (shift: number) =>
  `month,currency,rate\n${CLOSE_MONTH},GBP,${(1.15 + shift).toFixed(4)}\n${CLOSE_MONTH},USD,${(0.92 + shift).toFixed(4)}\n${CLOSE_MONTH},AUD,${(0.6 + shift).toFixed(4)}\n`;

interface Day {
  day: string;
  seconds: number;
  calls: number;
  deep: boolean;
  stale: number;
}

const parquetFiles = (dir: string) =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet'));

/** The orders state's deep_at of every group (it moves when a pass is a deep re-read). */
function deepAts(out: string): string {
  const dir = join(out, 'state', 'orders');
  return readdirSync(dir)
    .sort()
    .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { deep_at?: string }).deep_at ?? '')
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
  FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01' AND adjustment_kind NOT IN ('late order', 'listed again')
  UNION ALL
  SELECT organisation_group_id, order_currency, after_status, 1, after_group_revenue, after_face_value
  FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01' AND adjustment_kind <> 'removed'
), sides AS (
  SELECT g, c, s, n, r, f FROM closed UNION ALL SELECT g, c, s, n, r, f FROM moves
  UNION ALL SELECT g, c, s, -n, -r, -f FROM now
)
SELECT g, c, s, sum(n) AS orders_off, sum(r) AS revenue_off, sum(f) AS face_value_off FROM sides
WHERE g IN (SELECT g FROM closed) GROUP BY ALL
HAVING sum(n) <> 0 OR sum(r) <> 0 OR sum(f) <> 0 ORDER BY ALL`;

/** The adjustments to the closed month: how many, of which kinds, booked in which months. */
const ADJUSTMENTS = `SELECT count(*) AS n,
  string_agg(DISTINCT adjustment_kind, ', ' ORDER BY adjustment_kind) || '; to ' || string_agg(DISTINCT coalesce(after_status, '(none)'), ', ' ORDER BY coalesce(after_status, '(none)')) AS kinds,
  string_agg(DISTINCT strftime(booked_month, '%Y-%m'), ',') AS booked
FROM revenue_adjustments WHERE month = DATE '${CLOSE_MONTH}-01'`;

export async function scheduleScenario(o: ScenarioOptions & { days: number }): Promise<Row[]> {
  return withSandbox({ seed: 61, today: FIRST_DAY, lateOrders: 0.3 }, (sandbox) =>
    withScratch('schedule', (scratch) => schedule(sandbox, scratch.dir(), o)),
  );
}

async function schedule(sandbox: Sandbox, out: string, o: ScenarioOptions & { days: number }): Promise<Row[]> {
  const env = (extra: Record<string, string> = {}) =>
    orgEnv(sandbox, out, {
      PERKS_START_DATE: START,
      PERKS_FX_RATES: join(out, 'rates.csv'),
      PERKS_REPORTING_CURRENCY: 'EUR',
      ...extra,
    });
  const problems: string[] = [];
  const days: Day[] = [];
  const anonymised = new Map<number, { email: string; first: string; last: string }>();
  // Who ever held each first + last name pair: a pair two people shared is not searched for (the other
  // person's rows would match it), their e-mails still are.
  const holders = new Map<string, Set<number>>();
  let closed = false;
  const ratesFile = join(out, 'rates.csv');
  writeFileSync(ratesFile, rates(0));
  const earlyReport = join(out, 'reports', `revenue-${CLOSE_MONTH}-g${EARLY}.csv`);
  let closedReport: string | undefined;
  let beforeReopen: { n?: number; kinds?: string } = {};
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
    const started = performance.now();
    const run = await runCli(['run', '--quiet'], env());
    const seconds = (performance.now() - started) / 1000;
    if (run.code !== 0) {
      // --quiet: the failed step's line is in the summary (stdout)
      const why =
        run.stderr.trim().split('\n')[0] ||
        run.stdout
          .split('\n')
          .find((l) => /^\s+\w+\s+error\s/.test(l))
          ?.trim();
      problems.push(`${day}: perks run exited ${run.code}: ${why?.slice(0, 400)}`);
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
    const perks = async (args: string[]) => {
      const r = await runCli(args, env());
      if (r.code !== 0)
        problems.push(`${day}: perks ${args.join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
      return r.code === 0;
    };
    // one group at a time: each close takes the output's lock
    const closeMonth = async (groups: number[], force: boolean) => {
      let ok = true;
      for (const g of groups)
        ok =
          (await perks([
            'close',
            '--month',
            CLOSE_MONTH,
            '--group',
            String(g),
            '--by',
            'schedule',
            ...(force ? ['--force'] : []),
          ])) && ok;
      return ok;
    };
    if (day === EARLY_CLOSE_ON) {
      // day 1: October is provisional (Pending orders, the lookback still open): finance signs one group off anyway
      closed = (await closeMonth([EARLY], true)) || closed;
      writeFileSync(ratesFile, rates(0.01));
    }
    if (day === REOPEN_ON) {
      // what the first close saw change after it, booked as adjustments (the runs since checked the identity)
      const seen = await runCli(
        ['sql', `${ADJUSTMENTS} AND organisation_group_id = ${EARLY}`, '--format', 'json'],
        env(),
      );
      if (seen.code === 0) beforeReopen = (JSON.parse(seen.stdout) as (typeof beforeReopen)[])[0];
      await perks(['reopen', '--month', CLOSE_MONTH, '--group', String(EARLY), '--reason', 'late corrections']);
      await closeMonth([EARLY], true);
      if (await perks(['report', 'revenue', '--month', CLOSE_MONTH, '--group', String(EARLY), '--format', 'csv']))
        closedReport = readFileSync(earlyReport, 'utf8');
      writeFileSync(ratesFile, rates(0.02));
    }
    if (day === CLOSE_ON) {
      const others = sandbox.world.groups.map((g) => g.id).filter((g) => g !== EARLY);
      closed = (await closeMonth(others, false)) || closed;
      writeFileSync(ratesFile, rates(0.03));
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
  // Every e-mail, and the name pair of each that names one person, in one pass over the output.
  for (const p of sandbox.world.users.all())
    if (p.first_name && p.last_name)
      holders.set(
        `${p.first_name} ${p.last_name}`,
        (holders.get(`${p.first_name} ${p.last_name}`) ?? new Set()).add(p.id),
      );
  const pairs = [...anonymised.values()]
    .filter((p) => holders.get(`${p.first} ${p.last}`)?.size === 1)
    .map((p) => [p.first, p.last]);
  const hitsOf = (
    await searchOutput(
      out,
      [...anonymised.values()].map((p) => p.email),
      pairs,
    )
  ).hits;
  const hits = hitsOf.length;
  for (const h of hitsOf.slice(0, 5))
    problems.push(`an anonymised user's value is left: ${h.file} (${h.where}) holds ${h.needle}`);
  let adjustments = 0;
  let kinds = '';
  if (closed) {
    const off = await runCli(['sql', RECONCILE, '--format', 'json'], env());
    if (off.code !== 0) problems.push(`the reconciliation query exited ${off.code}: ${off.stderr.trim()}`);
    else
      for (const r of JSON.parse(off.stdout) as unknown[])
        problems.push(`${CLOSE_MONTH} as closed + adjustments ≠ as now: ${JSON.stringify(r)}`);
    const counted = await runCli(['sql', ADJUSTMENTS, '--format', 'json'], env());
    const found = (JSON.parse(counted.stdout || '[{}]') as { n?: number; kinds?: string; booked?: string }[])[0];
    adjustments = Number(found.n ?? 0);
    kinds = found.kinds ?? '';
    const booked = (found.booked ?? '').split(',').filter(Boolean);
    if (booked.some((m) => m <= CLOSE_MONTH))
      problems.push(
        `adjustments to ${CLOSE_MONTH} booked in ${booked.join(', ')}: each must be booked in an open month`,
      );
    if (closedReport !== undefined) {
      const again = await runCli(
        ['report', 'revenue', '--month', CLOSE_MONTH, '--group', String(EARLY), '--format', 'csv'],
        env(),
      );
      if (again.code !== 0) problems.push(`the closed report exited ${again.code}: ${again.stderr.trim()}`);
      else if (readFileSync(earlyReport, 'utf8') !== closedReport)
        problems.push(
          `the closed report of group ${EARLY} for ${CLOSE_MONTH} changed after its close (rates file changed, orders changed)`,
        );
    } else if (days.some((x) => x.day === REOPEN_ON)) problems.push(`no closed report of group ${EARLY} was written`);
    const verify = await runCli(['closes'], env());
    if (verify.code !== 0) problems.push(`perks closes exited ${verify.code}: ${verify.stderr.trim()}`);
  } else if (days.some((x) => x.day === CLOSE_ON)) problems.push(`${CLOSE_MONTH} was not closed`);
  const status = await runCli(['status'], env({ PERKS_NOW: `${sandbox.world.today}T13:00:00Z` }));
  if (status.code !== 0) problems.push(`perks status exited ${status.code}: ${status.stderr.trim()}`);
  if (closed && !/\b2026-10 signed off\b/.test(status.stdout))
    problems.push(`perks status does not name the close of ${CLOSE_MONTH}`);

  const orderFiles = parquetFiles(join(out, 'lake', 'orders')).length;
  const allFiles = parquetFiles(join(out, 'lake')).length;
  const ordinary = days.filter((x, i) => i > 0 && !x.deep);
  const deepDays = days.filter((x) => x.deep);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const figure =
    `${days.length} daily runs ${days[0]?.day}..${days.at(-1)?.day}: ${mean(days.map((x) => x.seconds)).toFixed(1)} s a run; calls a day ${mean(ordinary.map((x) => x.calls)).toFixed(0)} ` +
    `(deep re-read days ${deepDays.map((x) => x.calls).join(', ') || 'none'}); stale orders at most ${Math.max(0, ...days.map((x) => x.stale))} between deep re-reads, 0 after; ` +
    `${anonymised.size} anonymised (e-mails and ${pairs.length} name pairs searched): ${hits} values left; ${twice} interactions stored twice; ${CLOSE_MONTH} closed ${closed ? `(group ${EARLY} on ${EARLY_CLOSE_ON} provisional: ${beforeReopen.n ?? 0} adjustments (${beforeReopen.kinds ?? ''}) by ${REOPEN_ON}, when it was reopened and closed again; the others on ${CLOSE_ON}), ${adjustments} adjustments after (${kinds}), as closed + adjustments = as now, the closed report unchanged` : 'no'}; lake ${allFiles} files (orders ${orderFiles})`;
  o.log(`schedule: ${figure}`);
  return [row('daily schedule', days.length, problems, figure)];
}
