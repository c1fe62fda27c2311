/**
 * An extract into a store killed at a share of its calls, then continued on a fresh machine (issue 42): what
 * the store test and the reliability scenario measure. Calls are counted at the sandbox; the killed extract is
 * paced (PERKS_RATE_LIMIT) to last about 25 seconds and publishes a checkpoint every second.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/config/defaults.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { StoreWorld } from './store-world.js';

/**
 * How long the killed extract would take whole: paced so that a second's checkpoint interval and a publish
 * (~0.5-1.5 s of PUTs to s3rver here) are to the run what a minute's are to a real extract at 120 calls a minute.
 */
const PACED_SECONDS = 25;

export const STORE_STREAMS = ['orders', 'order_versions', 'users', 'groups', 'offers', 'redemption_stats', 'credit'];

export interface KilledExtract {
  /** A whole extract's calls, on its own prefix and sandbox. */
  wholeCalls: number;
  /** Calls made before the kill. */
  killedCalls: number;
  /** Publishes the killed extract committed (its index's generation). */
  checkpoints: number;
  /** Calls of the rerun on a fresh machine. */
  rerunCalls: number;
  wholeCopy: string;
  rerunCopy: string;
  /** Windows re-read that a checkpoint had committed, and other findings. */
  problems: string[];
}

interface Manifest {
  streams: { name: string; groups: { group: number; windows: number }[] }[];
}

/** Orders windows per group of the one run manifest in an output folder. */
function windowsRun(copy: string): Map<number, number> | undefined {
  const [file] = existsSync(join(copy, 'runs')) ? readdirSync(join(copy, 'runs')) : [];
  if (!file) return undefined;
  const m = JSON.parse(readFileSync(join(copy, 'runs', file), 'utf8')) as Manifest;
  return new Map((m.streams.find((s) => s.name === 'orders')?.groups ?? []).map((g) => [g.group, g.windows]));
}

/**
 * `whole` and `killed`: two sandboxes of one seed (the same world), so that each one's call count is its
 * run's alone.
 */
export async function extractKilledAt(
  world: StoreWorld,
  whole: Sandbox,
  killed: Sandbox,
  share: number,
  prefix: string,
): Promise<KilledExtract> {
  const problems: string[] = [];
  const wholeCopy = world.machine();
  const before = whole.stats().calls;
  const w = await world.perks(['extract'], world.env(whole, `${prefix}-whole`, wholeCopy));
  if (w.code !== 0) problems.push(`the whole extract exited ${w.code}: ${w.stderr.slice(-300)}`);
  const wholeCalls = whole.stats().calls - before;

  const pace = String(Math.ceil((wholeCalls * 60) / PACED_SECONDS));
  const settings = { PERKS_RATE_LIMIT: pace, PERKS_STORE_CHECKPOINT_SECONDS: '1' };
  const start = killed.stats().calls;
  const running = world.start(['extract'], world.env(killed, prefix, world.machine(), settings));
  const target = start + Math.round(wholeCalls * share);
  while (killed.stats().calls < target && running.child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
  running.child.kill('SIGKILL');
  const end = await running.done;
  if (end.signal !== 'SIGKILL') problems.push(`the extract ended before its kill (exit ${end.code})`);
  const killedCalls = killed.stats().calls - start;
  const index = await world.index(prefix);
  const objects = await world.objects(prefix);
  const checkpointed = new Map<number, { done: number; finished: boolean }>();
  for (const [path, entry] of Object.entries(index?.files ?? {})) {
    const m = /^state\/orders\/(\d+)\.json$/.exec(path);
    if (!m) continue;
    const state = JSON.parse(objects.get(entry.key)!.toString('utf8')) as {
      pass?: { done: string[]; finished?: boolean };
    };
    checkpointed.set(Number(m[1]), { done: state.pass?.done.length ?? 0, finished: state.pass?.finished === true });
  }

  const rerunCopy = world.machine();
  const again = killed.stats().calls;
  const r = await world.perks(['extract'], world.env(killed, prefix, rerunCopy));
  if (r.code !== 0) problems.push(`the rerun exited ${r.code}: ${r.stderr.slice(-300)}`);
  const rerunCalls = killed.stats().calls - again;
  // every orders window a checkpoint committed is skipped: the rerun reads the rest of the pass only, or,
  // when a checkpoint committed the whole pass, the lookback, as any run after a finished one does
  const all = windowsRun(wholeCopy);
  const rerun = windowsRun(rerunCopy);
  // a run that failed before its manifest is a problem said above, not a missing file to throw on
  if (!all || !rerun) problems.push(`no run manifest in the ${all ? 'rerun' : 'whole extract'}'s copy`);
  for (const [group, n] of all ?? []) {
    const c = checkpointed.get(group);
    const want = c?.finished ? DEFAULTS.lookbackDays : n - (c?.done ?? 0);
    if ((rerun?.get(group) ?? 0) !== want)
      problems.push(`group ${group}: the rerun read ${rerun?.get(group) ?? 0} orders windows, expected ${want}`);
  }
  return {
    wholeCalls,
    killedCalls,
    checkpoints: index?.generation ?? 0,
    rerunCalls,
    wholeCopy,
    rerunCopy,
    problems,
  };
}
