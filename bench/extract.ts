/**
 * Extract call efficiency, with the limiter out of the way (the sandbox's limit very high):
 * 1. a full refresh of the sandbox: calls made ÷ the minimum calls the same data needs (pages of 100;
 *    orders need at least one call per group-local day, since a day's window is what dates them);
 * 2. an incremental run after one day of sandbox changes: calls ÷ the full refresh's calls;
 * 3. a rerun the same day after the platform changed (churn): it re-reads the lookback only, about
 *    lookback days × groups calls plus pages, and its calls ÷ the full refresh's;
 * 4. the weekly deep re-read's extra calls, as --plan prints them for the day it comes;
 * 5. what the credit ranking and the close's credit refresh cost (issue 25): the same-day rerun's credit calls
 *    per rank, which ranks a tight budget (0.25 min at 120/min) serves, and the calls of `perks close`'s credit
 *    refresh of last month's holders as --plan counts them, extrapolated to 100,000 users at 120 calls/min.
 * Also rows per second and the share of wall time spent outside HTTP.
 *   node bin/run-ts.mjs bench/extract.ts [scale=medium] [days=365]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { dayWindows, extract, monthWindows, shiftDay, type ExtractResult } from '../src/extract/index.js';
import { creditHolders } from '../src/close/index.js';
import { REASONS, rankText } from '../src/extract/per-user/user-selection.js';
import { parseMonth } from '../src/report/index.js';
import { startSandbox, type Scale } from '../src/sandbox/index.js';
import { outputAt } from '../src/output/index.js';

const scale = (process.argv[2] ?? 'medium') as Scale;
const days = Number(process.argv[3] ?? 365);
const today = '2026-11-22';
const sandbox = await startSandbox({ port: 0, scale, seed: 5, rateLimit: 10_000_000, tokenRateLimit: 1000, today });
const out = mkdtempSync(join(tmpdir(), 'perks-bench-extract-'));
const org = sandbox.credentials.organisation;
const start = shiftDay(today, -days);
const config = loadConfig({
  PERKS_BASE_URL: sandbox.baseUrl,
  PERKS_CLIENT_ID: String(org.client_id),
  PERKS_CLIENT_SECRET: org.client_secret,
  PERKS_GROUP_IDS: org.organisation_group_ids.join(','),
  PERKS_RATE_LIMIT: '10000000',
  PERKS_OUTPUT: out,
  PERKS_START_DATE: start,
});

/** The fewest calls that can fetch the same data through this API. */
function minimumCalls(upper: string): Record<string, number> {
  const w = sandbox.world;
  const pages = (n: number) => Math.max(1, Math.ceil(n / 100));
  const min: Record<string, number> = {
    groups: 1,
    users: 0,
    offers: pages(w.offers.length),
    orders: 0,
    redemption_stats: 0,
    credit: 0,
    interactions: 0,
  };
  for (const g of w.groups) {
    const users = w.users.inGroup(g.id).length;
    min.users += pages(users);
    min.credit += users;
    min.interactions += users;
    for (const d of dayWindows(start, upper, g.timezone))
      min.orders += pages(w.ordersOf(g.id, { from: d.start.getTime(), to: d.end.getTime() - 1 }).length);
    min.redemption_stats += monthWindows(start, upper, g.timezone).length * Math.ceil(users / 100);
  }
  return min;
}

function line(label: string, r: ExtractResult, seconds: number) {
  const rows = r.streams.reduce((n, s) => n + s.rows, 0);
  return `${label}: ${r.api.calls} calls, ${rows} rows, ${(rows / seconds).toFixed(0)} rows/s, ${seconds.toFixed(1)} s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`;
}

let t = Date.now();
const full = await extract(config, { now: new Date(`${today}T12:00:00Z`), budgetMinutes: 1e6, quiet: true } as never);
const fullSeconds = (Date.now() - t) / 1000;
const min = minimumCalls(today);
console.log(`extract (${scale}, ${days} days) ${line('full refresh', full, fullSeconds)}`);
let made = 0;
let needed = 0;
for (const s of full.streams) {
  const m = min[s.name] ?? 0;
  made += s.calls;
  needed += m;
  console.log(
    `  ${s.name.padEnd(17)} calls ${String(s.calls).padStart(7)}  minimum ${String(m).padStart(7)}  ratio ${(s.calls / Math.max(1, m)).toFixed(3)}`,
  );
}
console.log(`  call efficiency (calls ÷ minimum, token excluded): ${(made / needed).toFixed(3)} (goal <= 1.05)`);

sandbox.advance(1);
t = Date.now();
const next = await extract(config, {
  output: outputAt(out),
  now: new Date(`${shiftDay(today, 1)}T12:00:00Z`),
  budgetMinutes: 1e6,
});
console.log(`extract ${line('incremental after one day', next, (Date.now() - t) / 1000)}`);
for (const s of next.streams) {
  const reasons: Record<string, number> = {};
  for (const g of s.groups) for (const [k, v] of Object.entries(g.users ?? {})) reasons[k] = (reasons[k] ?? 0) + v;
  console.log(
    `  ${s.name.padEnd(17)} calls ${String(s.calls).padStart(7)}${Object.keys(reasons).length ? `  users by reason ${JSON.stringify(reasons)}` : ''}`,
  );
}
console.log(`  incremental ÷ full calls: ${(next.api.calls / full.api.calls).toFixed(3)} (goal <= 0.05)`);

// The same day again, after the platform changed without the day moving (late orders, refunds, users).
const change = sandbox.churn();
t = Date.now();
const rerun = await extract(config, {
  output: outputAt(out),
  now: new Date(`${shiftDay(today, 1)}T18:00:00Z`),
  budgetMinutes: 1e6,
});
const lookbackWindows = config.lookbackDays * sandbox.world.groups.length;
const orders = rerun.streams.find((s) => s.name === 'orders')!;
console.log(`extract ${line('same-day rerun after a change', rerun, (Date.now() - t) / 1000)}`);
console.log(
  `  change: ${change.lateOrders.length} late orders, ${change.refunded.length} refunds, ${change.newUsers.length} new, ${change.deactivated.length} deactivated, ${change.anonymised.length} anonymised users`,
);
for (const s of rerun.streams) console.log(`  ${s.name.padEnd(17)} calls ${String(s.calls).padStart(7)}`);
console.log(
  `  orders: ${orders.calls} calls for ${lookbackWindows} lookback windows (${config.lookbackDays} days x ${sandbox.world.groups.length} groups): ${(orders.calls / lookbackWindows).toFixed(2)} calls a window`,
);
console.log(`  same-day rerun ÷ full calls: ${(rerun.api.calls / full.api.calls).toFixed(3)}`);

// 4. The periodic deep re-read (PERKS_DEEP_REREAD_DAYS, default 7): the open and previous month once every N
// days. Its extra calls as `--plan` prints them for the day it comes (one call a window; pages not counted).
if (config.deepRereadDays > 0) {
  const due = shiftDay(today, config.deepRereadDays);
  const plan = await extract(config, { output: outputAt(out), now: new Date(`${due}T12:00:00Z`), planOnly: true });
  const extra = plan.plan!.rows.reduce(
    (n, r) => n + Number(/~(\d+) calls more than the lookback/.exec(r.detail)?.[1] ?? 0),
    0,
  );
  console.log(
    `  deep re-read on ${due} (every ${config.deepRereadDays} days): ~${extra} calls more than that day's lookback, ${(extra / full.api.calls).toFixed(3)} of a full refresh; a day's average over the period ${((next.api.calls * config.deepRereadDays + extra) / config.deepRereadDays / full.api.calls).toFixed(3)} (the next-day goal <= 0.05 is for ordinary days)`,
  );
}

// 5. The credit ranking (issue 25): the rerun's credit calls per rank (one call a user), and what a tight budget
// serves of them, rank by rank; then the close's credit refresh of last month's holders, from the plan.
const AT = 120;
const ranked: Record<string, number> = {};
for (const g of rerun.streams.find((s) => s.name === 'credit')!.groups)
  for (const r of REASONS) ranked[r] = (ranked[r] ?? 0) + (g.users?.[r] ?? 0);
const rankCalls = Object.values(ranked).reduce((n, c) => n + c, 0);
console.log(
  `  credit ranking of the same-day rerun (${change.loggedIn.length} login-only changes, ${change.creditGranted.length} silent grants): ${rankText(ranked, {})}; ${rankCalls} calls, ${(rankCalls / AT).toFixed(1)} min at ${AT}/min`,
);
let pool = Math.floor((0.25 * AT) / 2);
const tight: Record<string, number> = {};
const waiting: Record<string, number> = {};
for (const r of REASONS) {
  tight[r] = Math.min(pool, ranked[r] ?? 0);
  waiting[r] = (ranked[r] ?? 0) - tight[r];
  pool -= tight[r];
}
console.log(
  `  under --budget-minutes 0.25 at ${AT}/min (${Math.floor((0.25 * AT) / 2)} credit calls): ${rankText(tight, waiting)}`,
);
const month = parseMonth(shiftDay(`${today.slice(0, 7)}-01`, -1).slice(0, 7)); // the month before today's
const groupIds = sandbox.world.groups.map((g) => g.id);
// every holder, as if none had been read since the month end (the close refreshes only those not read since)
const holders = await creditHolders(out, month, groupIds, { all: true });
const holderCount = [...holders.values()].reduce((n, ids) => n + ids.length, 0);
const closePlan = await extract(config, {
  output: outputAt(out),
  now: new Date(`${shiftDay(today, 1)}T18:00:00Z`),
  streams: ['credit'],
  planOnly: true,
  refreshUsers: Object.fromEntries(holders),
  budgetMinutes: 1e6,
});
const planned = (stream: string) =>
  closePlan.plan!.rows.filter((r) => r.stream === stream).reduce((n, r) => n + r.estimatedCalls, 0);
const users = sandbox.world.groups.reduce((n, g) => n + sandbox.world.users.inGroup(g.id).length, 0);
const closeCalls = planned('credit') + planned('users') + planned('groups');
const at100k = Math.round((planned('credit') / users) * 100_000) + Math.ceil(100_000 / 100) + 1;
console.log(
  `  close of ${month.ym}: ${holderCount} of ${users} users hold credit or spent it in the month; the credit refresh plans ${closeCalls} calls (${planned('credit')} credit, ${planned('users')} users listing), ${(closeCalls / AT).toFixed(1)} min at ${AT}/min; at 100,000 users the same share is ~${at100k} calls, ${(at100k / AT).toFixed(0)} min (${(at100k / AT / 60).toFixed(1)} h) at ${AT}/min`,
);

await sandbox.close();
rmSync(out, { recursive: true, force: true });
