/**
 * Issue 50: the daily job on a real S3 server that enforces conditional writes, Ceph RGW (test/support/rgw.ts),
 * with no Redis (the lease lives in the store):
 * - day 0: `perks run` paced to last more than a minute under a lease of 12 s (a heartbeat every 2 s): exit 0,
 *   the lease renewed all along (its heartbeat_at seen moving), a second run in another PID namespace of this
 *   host refused (exit 5) while the first lives, and a fresh working copy answering the same SQL;
 * - day 1: the next day's run on another fresh machine exits 0;
 * - an extract killed half-way continued on a fresh machine from its last checkpoint (goal: at most 0.6 of a
 *   whole extract's calls, as on s3rver).
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { LeaseHolder } from '../../../src/store/lease.js';
import { extractKilledAt } from '../../support/killed-extract.js';
import { perksInOtherPidNamespace } from '../../support/pid-namespace.js';
import { s3Client } from '../../support/s3.js';
import { testSandbox } from '../../support/sandbox.js';
import { messages, startStoreWorld, type StoreWorld } from '../../support/store-world.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUERY = [
  'sql',
  'SELECT organisation_group_id, month, order_currency, sum(group_revenue) AS revenue, sum(orders) AS orders FROM revenue_monthly GROUP BY ALL ORDER BY ALL',
  '--format',
  'csv',
];

async function leaseOf(world: StoreWorld, prefix: string): Promise<LeaseHolder | undefined> {
  const client = s3Client(world.s3);
  try {
    const got = await client.send(
      new GetObjectCommand({ Bucket: world.s3.bucket, Key: `${prefix}/_perks/lease.json` }),
    );
    return JSON.parse(await got.Body!.transformToString()) as LeaseHolder;
  } catch {
    return undefined;
  } finally {
    client.destroy();
  }
}

/** Day 0 and day 1 of the daily job, with a second run refused and a fresh copy's SQL. */
async function dailyJob(world: StoreWorld, o: ScenarioOptions): Promise<Row> {
  // paced: the tiny sandbox's run makes about 600 calls, a minute or more at 500 a minute
  const sandbox = await testSandbox({ seed: 50 });
  const problems: string[] = [];
  const env = (machine: string) =>
    world.env(sandbox, 'daily', machine, { PERKS_STORE_LEASE_SECONDS: '12', PERKS_RATE_LIMIT: '500' });
  try {
    o.log('store-rgw: day 0, perks run under a lease of 12 s, a second run in another PID namespace');
    const first = world.machine();
    const running = world.start(['run', '--no-writeback'], env(first));
    const beats = new Set<string>();
    let second: Awaited<ReturnType<typeof perksInOtherPidNamespace>> | undefined;
    while (running.child.exitCode === null) {
      const held = await leaseOf(world, 'daily');
      if (held) beats.add(held.heartbeat_at);
      if (held && !second) second = await perksInOtherPidNamespace(['run', '--no-writeback'], env(world.machine()));
      await sleep(500);
    }
    const day0 = await running.done;
    if (day0.code !== 0) problems.push(`day 0: exit ${day0.code}: ${messages(day0).join(' | ').slice(0, 300)}`);
    if (day0.ms < 60_000) problems.push(`day 0 lasted ${day0.ms} ms, not a minute`);
    const expected = Math.floor(day0.ms / 2000);
    if (beats.size < expected / 2)
      problems.push(`${beats.size} heartbeats seen over ${day0.ms} ms (about ${expected} made)`);
    if (second?.code !== 5) problems.push(`the second run: exit ${second?.code}: ${second?.stderr.slice(-300)}`);
    if (second && !second.isolated)
      problems.push('the second run was not in another PID namespace (unshare not permitted)');

    const here = await world.perks(QUERY, env(first));
    const fresh = await world.perks(QUERY, env(world.machine()));
    if (here.code !== 0 || fresh.code !== 0 || here.stdout !== fresh.stdout || here.stdout.split('\n').length < 4)
      problems.push(`a fresh copy's SQL differs (exit ${here.code}/${fresh.code})`);

    o.log('store-rgw: day 1 on another fresh machine');
    sandbox.advance(1);
    const day1 = await world.perks(['run', '--no-writeback'], env(world.machine()), 600_000);
    if (day1.code !== 0) problems.push(`day 1: exit ${day1.code}: ${messages(day1).join(' | ').slice(0, 300)}`);
    return row(
      'store-rgw',
      2,
      problems,
      `day 0 ${(day0.ms / 1000).toFixed(0)} s under a 12 s lease: ${beats.size} heartbeats seen, a second run refused (exit ${second?.code}, ${second?.isolated ? 'another PID namespace' : 'same namespace'}), a fresh copy's SQL the same; day 1 exit ${day1.code} in ${(day1.ms / 1000).toFixed(0)} s`,
    );
  } finally {
    await sandbox.close();
  }
}

export async function storeRgwScenario(o: ScenarioOptions): Promise<Row[]> {
  const world = await startStoreWorld('rgw');
  try {
    const daily = await dailyJob(world, o);
    o.log('store-rgw: an extract killed half-way, continued on a fresh machine');
    const [whole, killed] = await Promise.all([testSandbox({ seed: 42 }), testSandbox({ seed: 42 })]);
    try {
      const k = await extractKilledAt(world, whole, killed, 0.5, 'killed');
      const ratio = k.rerunCalls / k.wholeCalls;
      const problems = [...k.problems];
      if (ratio > 0.6) problems.push(`the rerun made ${ratio.toFixed(3)} of a whole extract's calls (goal <= 0.6)`);
      return [
        daily,
        row(
          'store-rgw-checkpoints',
          1,
          problems,
          `killed at ${k.killedCalls} of ${k.wholeCalls} calls after ${k.checkpoints} checkpoints; the rerun on a fresh machine ${k.rerunCalls} calls = ${ratio.toFixed(3)} of a whole extract (goal <= 0.6)`,
        ),
      ];
    } finally {
      await whole.close();
      await killed.close();
    }
  } finally {
    await world.stop();
  }
}
