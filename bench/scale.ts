/**
 * Scale-out: three `perks extract` processes on ONE credential against a sandbox with a sliding-window
 * limit, first sharing the budget through Redis (PERKS_REDIS_URL), then without Redis (each believes it
 * owns the whole limit). Prints, side by side, the most calls the sandbox saw in any 60 s, the 429s,
 * the combined rate of accepted calls divided by the limit (goal with Redis: >= 0.95, no 429), and how
 * bursty the traffic was (most calls in any 10 s, against limit/6 for an even pace; longest silence).
 *   node bin/run-ts.mjs bench/scale.ts [limit=600] [budgetMinutes=2]
 * Needs `redis-server` on the PATH (apt-get install redis-server).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxCallsInWindow, startSandbox } from '../src/sandbox/index.js';
import { orgEnv } from '../test/support/sandbox.js';
import { perksExtract, type CliResult } from '../test/support/cli.js';
import { startRedis } from '../test/support/redis.js';

const LIMIT = Number(process.argv[2] ?? 600);
/** Per-user call budget of each process: budget × limit / 2 credit calls, about 190 s of calls for three at 600/min (long enough to show the steady state without Redis). */
const BUDGET_MINUTES = process.argv[3] ?? '2';
const PROCESSES = 3;

interface Outcome {
  label: string;
  wallS: number;
  calls: number;
  throttled: number;
  max60: number;
  max10: number;
  longestGapS: number;
  ratio: number;
  perProcess: string[];
}

async function measure(label: string, redisUrl: string | undefined): Promise<Outcome> {
  const sandbox = await startSandbox({ port: 0, scale: 'small', seed: 5, rateLimit: LIMIT });
  const outs: string[] = [];
  try {
    const started = Date.now();
    const runs = await Promise.all(
      Array.from({ length: PROCESSES }, () => {
        const out = mkdtempSync(join(tmpdir(), 'perks-bench-scale-'));
        outs.push(out);
        const env = orgEnv(sandbox, out, {
          PERKS_RATE_LIMIT: String(LIMIT),
          ...(redisUrl ? { PERKS_REDIS_URL: redisUrl } : {}),
        });
        return perksExtract(['--quiet', '--streams', 'credit', '--budget-minutes', BUDGET_MINUTES], env);
      }),
    );
    const wallS = (Date.now() - started) / 1000;
    for (const r of runs)
      if (r.code !== 0) throw new Error(`${label}: an extract failed (exit ${r.code}): ${r.stderr.slice(-400)}`);
    const client = String(sandbox.credentials.organisation.client_id);
    const stats = sandbox.stats();
    const times = stats.callTimes[client] ?? [];
    const throttled = stats.throttledByClient[client] ?? 0;
    const minutes = (times.at(-1)! - times[0]) / 60_000;
    return {
      label,
      wallS,
      calls: times.length,
      throttled,
      max60: maxCallsInWindow(times, 60_000),
      max10: maxCallsInWindow(times, 10_000),
      longestGapS: Math.max(0, ...times.slice(1).map((t, i) => t - times[i])) / 1000,
      ratio: (times.length - throttled - 1) / minutes / LIMIT,
      perProcess: runs.map(apiLine),
    };
  } finally {
    await sandbox.close();
    // The lakes are only a means to the figures: gone when the run ends, success or failure.
    for (const out of outs) rmSync(out, { recursive: true, force: true });
  }
}

/** The `api:` line of a child's summary: its own calls, 429s and rate. */
function apiLine(r: CliResult): string {
  return /api: (.*)/.exec(r.stdout)?.[1] ?? '(no summary)';
}

const redis = await startRedis();
const results: Outcome[] = [];
try {
  results.push(await measure('shared budget (Redis)', redis.url));
  results.push(await measure('no Redis, 3 output dirs', undefined));
} finally {
  await redis.stop();
}

console.log(
  `scale  ${PROCESSES} extract processes, one credential, sandbox limit ${LIMIT}/min (sliding 60 s window), --streams credit --budget-minutes ${BUDGET_MINUTES}`,
);
const head = [
  'wall s',
  'calls',
  '429s',
  'max in any 60 s',
  'max in any 10 s',
  'longest gap s',
  'accepted rate / limit',
];
console.log(`  ${'mode'.padEnd(26)} ${head.map((h) => h.padStart(Math.max(7, h.length))).join(' ')}`);
for (const r of results) {
  const cells = [
    r.wallS.toFixed(1),
    r.calls,
    r.throttled,
    r.max60,
    r.max10,
    r.longestGapS.toFixed(1),
    r.ratio.toFixed(3),
  ];
  console.log(
    `  ${r.label.padEnd(26)} ${cells.map((c, i) => String(c).padStart(Math.max(7, head[i].length))).join(' ')}`,
  );
}
console.log(
  `  goal with Redis: max in any 60 s <= ${LIMIT}, no 429, rate / limit >= 0.95 (an even pace makes at most ${Math.ceil(LIMIT / 6)} calls in 10 s)`,
);
for (const r of results) {
  console.log(`  ${r.label}, each process:`);
  for (const line of r.perProcess) console.log(`    ${line}`);
}
