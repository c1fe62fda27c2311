/**
 * The output in object storage (issue 24), at tiny scale, against a real S3-protocol server and Redis:
 * a fresh machine continues where the last one stopped; two runs at once, one refused; write-back from
 * two machines, killed after a post, never posts twice; a publish killed before its commit leaves nothing.
 * The long scenarios (every crash point, readers during compaction and upload) are in `npm run reliability`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { query } from '../transform/helpers.js';
import { describe, expect, test } from 'vitest';
import { shiftDay } from '../../src/extract/index.js';
import { storedTimes } from '../writeback/fixtures.js';
import { streamRows } from '../support/lake-check.js';
import { orgEnv } from '../support/sandbox.js';
import { runCli } from '../support/cli.js';
import { startConditionalFront } from '../support/s3-conditional.js';
import { s3Client } from '../support/s3.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { processIdentity } from '../../src/shared/process-identity.js';
import { messages } from '../support/store-world.js';
import { storeWorldForFile } from '../support/store-file.js';

const { world, sandbox } = storeWorldForFile(24);

const STREAMS = ['orders', 'order_versions', 'users', 'groups', 'offers', 'redemption_stats', 'credit', 'interactions'];

/** What must be equal whichever machine ran: lake rows, watermarks, close records, ledger outcomes. */
async function snapshot(out: string) {
  const lake: Record<string, string[]> = {};
  for (const s of STREAMS) lake[s] = await streamRows(out, s);
  const watermarks = Object.fromEntries(
    readdirSync(join(out, 'state', 'orders')).map((f) => [
      f,
      (JSON.parse(readFileSync(join(out, 'state', 'orders', f), 'utf8')) as { watermark?: string }).watermark,
    ]),
  );
  const closes = readFileSync(join(out, 'closes', 'closes.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const record = JSON.parse(l) as Record<string, unknown>;
      for (const k of ['at', 'hash', 'prev_hash']) delete record[k]; // the clock runs on; the rest is equal
      return JSON.stringify(record);
    });
  const ledger = (await streamRows(out, 'writeback_ledger'))
    .map((j) => JSON.parse(j) as { interaction_id: number; status: string })
    .map((r) => `${r.interaction_id}:${r.status}`)
    .sort();
  return { lake, watermarks, closes, ledger };
}

/** `YYYY-MM` of the month before the day `day` (YYYY-MM-DD). */
function previousMonth(day: string): string {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - 1);
  return d.toISOString().slice(0, 7);
}

/** The run manifests of an output folder (file names). */
const manifests = (out: string): string[] => readdirSync(join(out, 'runs')).sort();

/**
 * Order calls of the one run whose manifest is not among `before` (run ids start with the pinned clock's
 * instant, so their order says nothing).
 */
function orderCalls(out: string, before: string[]): number {
  const added = manifests(out).filter((f) => !before.includes(f));
  expect(added).toHaveLength(1);
  const m = JSON.parse(readFileSync(join(out, 'runs', added[0]), 'utf8')) as {
    streams: { name: string; groups: { calls: number }[] }[];
  };
  return m.streams.find((s) => s.name === 'orders')!.groups.reduce((n, g) => n + g.calls, 0);
}

/**
 * The close's record, marts and month's report published in one commit (the generation after `generation`),
 * the marts and report at their own names saying the month is signed off (`record`: the close record's text).
 */
async function closedInStore(month: string, generation: number, record: string): Promise<void> {
  const objects = await world().objects('moved');
  expect(JSON.parse(objects.get('_perks/index.json')!.toString('utf8')).generation).toBe(generation + 1);
  const { hash } = JSON.parse(record.trim().split('\n').at(-1)!) as { hash: string };
  expect(objects.get(`reports/revenue-${month}.html`)!.toString('utf8')).toContain(hash);
  const mart = join(world().machine(), 'revenue_monthly.parquet');
  mkdirSync(dirname(mart), { recursive: true });
  writeFileSync(mart, objects.get('marts/revenue_monthly.parquet')!);
  const rows = await query(
    ':memory:',
    `SELECT bool_and(is_closed) AS c FROM '${mart}' WHERE month = DATE '${month}-01'`,
  );
  expect(rows).toEqual([{ c: true }]);
}

describe('the output in object storage', () => {
  test('a run on a fresh machine continues where the last one stopped: lake, watermarks, close record and ledger as if it never moved, no window extracted again beyond the lookback', async () => {
    const [inStore, local] = [await sandbox(), await sandbox()];
    const a = world().machine();
    const storeEnv = world().env(inStore, 'moved', a);
    const localOut = world().machine();
    const localEnv = orgEnv(local, localOut);

    const first = await world().perks(['run'], storeEnv);
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(a, 'lake')), 'the working copy is the output folder').toBe(true);
    expect(existsSync(join(process.cwd(), 's3:')), 'no local folder named after the URL').toBe(false);
    // a month the close takes without --force whatever instant PERKS_TEST_NOW moves the suite to: its end and
    // the 7-day lookback passed (the extract reaches the day before the sandbox's; early in a month, the month
    // before is still provisional)
    const month = previousMonth(shiftDay(inStore.world.today, -9));
    const generation = (await world().index('moved'))!.generation;
    const closed = await world().perks(['close', '--month', month, '--no-reread', '--by', 'finance'], storeEnv);
    expect(closed.code, closed.stderr).toBe(0);
    await closedInStore(month, generation, readFileSync(join(a, 'closes', 'closes.jsonl'), 'utf8'));
    expect((await runCli(['run'], localEnv, { timeoutMs: 240_000 })).code).toBe(0);
    expect((await runCli(['close', '--month', month, '--no-reread', '--by', 'finance'], localEnv)).code).toBe(0);

    const storeRuns = manifests(a);
    rmSync(a, { recursive: true, force: true }); // the laptop is lost
    const b = world().machine();
    const second = await world().perks(['run'], { ...storeEnv, PERKS_CACHE_DIR: b });
    expect(second.code, `${second.stdout}\n${second.stderr.split('\n').slice(-8).join('\n')}`).toBe(0);
    const localRuns = manifests(localOut);
    expect((await runCli(['run'], localEnv, { timeoutMs: 240_000 })).code).toBe(0);

    expect(await snapshot(b)).toEqual(await snapshot(localOut));
    // the second run on B re-read only what a run that never moved re-reads (the lookback)
    expect(orderCalls(b, storeRuns)).toBe(orderCalls(localOut, localRuns));
    const status = await world().perks(['status'], { ...storeEnv, PERKS_CACHE_DIR: world().machine() });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/signed off/);
    expect(status.stdout).toMatch(/^status of s3:\/\/perks-test\/moved /);
  }, 300_000);

  test('two runs at once on two machines: one is refused with exit 5 naming the holder, nothing torn, the next run completes', async () => {
    const s = await sandbox();
    const one = world().start(['run'], world().env(s, 'twice', world().machine()));
    expect(await one.saw('"event":"stream"')).toBe(true); // it holds the store's lease
    const two = await world().perks(['run'], world().env(s, 'twice', world().machine()));
    expect(two.code).toBe(5);
    expect(messages(two)).toEqual([
      expect.stringMatching(
        /^perks: the store s3:\/\/perks-test\/twice .* is in use by another run \(`perks run` pid \d+ on /,
      ),
    ]);
    expect((await one.done).code).toBe(0);
    const index = await world().index('twice');
    const objects = await world().objects('twice');
    for (const e of Object.values(index!.files)) expect(objects.has(e.key), e.key).toBe(true);
    // the index lists the last publish's garbage until the next commit; every object of it is gone
    expect(index!.garbage.filter((k) => objects.has(k))).toEqual([]);
    expect(objects.has('_perks/intent.json')).toBe(false);
    const third = await world().perks(['build'], world().env(s, 'twice', world().machine()));
    expect(third.code, third.stderr).toBe(0);
  }, 300_000);

  test('write-back from two machines, the first killed right after its posts: every interaction stored exactly once', async () => {
    const s = await sandbox();
    const a = world().machine();
    const prepared = await world().perks(['run', '--no-writeback'], world().env(s, 'wb', a));
    expect(prepared.code, prepared.stderr).toBe(0);
    const killed = await world().perks(['writeback'], world().env(s, 'wb', a, { PERKS_CRASH_AT: 'after-post:2' }));
    expect(killed.signal).toBe('SIGKILL');
    const b = await world().perks(['writeback'], world().env(s, 'wb', world().machine()));
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/recovered|found upstream|already stored/i);
    const again = await world().perks(['writeback'], world().env(s, 'wb', a));
    expect(again.code, again.stderr).toBe(0);
    const twice = [...storedTimes(s)].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
  }, 300_000);

  test('a publish killed before its commit leaves nothing counted; the next command rolls it back and publishes whole', async () => {
    const s = await sandbox();
    const killed = await world().perks(
      ['extract', '--streams', 'groups,users'],
      world().env(s, 'killed', world().machine(), { PERKS_CRASH_AT: 'store-before-commit' }),
    );
    expect(killed.signal).toBe('SIGKILL');
    expect(await world().index('killed')).toBeUndefined();
    // a reader (no lease, no recovery) takes it for an empty store, not for a prefix perks did not write
    const reader = await world().perks(['closes', '--format', 'json'], world().env(s, 'killed', world().machine()));
    expect(messages(reader).join('\n')).not.toMatch(/not written by perks/);
    const left = await world().objects('killed');
    expect(
      [...left.keys()].some((k) => k.startsWith('lake/')),
      'uploaded, not committed',
    ).toBe(true);
    const rerun = await world().perks(
      ['extract', '--streams', 'groups,users'],
      world().env(s, 'killed', world().machine()),
    );
    expect(rerun.code, rerun.stderr).toBe(0);
    const index = await world().index('killed');
    const objects = await world().objects('killed');
    const named = new Set(Object.values(index!.files).map((e) => e.key));
    const stray = [...objects.keys()].filter(
      (k) =>
        !named.has(k) && !k.startsWith('_perks/') && !k.endsWith('/_current.json') && !k.startsWith('lake/_symlink/'),
    );
    expect(stray).toEqual([]);
  }, 300_000);
});

describe('on a service that enforces conditional writes (If-None-Match, If-Match), without Redis', () => {
  test('the lease is an object created only if absent: a second run at once is refused (exit 5), the first completes and removes it', async () => {
    const front = await startConditionalFront(world().s3.endpoint);
    try {
      const s = await sandbox();
      const env = (machine: string) =>
        world().env(s, 'conditional', machine, { AWS_ENDPOINT_URL_S3: front.endpoint, PERKS_REDIS_URL: '' });
      const one = world().start(['run', '--no-writeback'], env(world().machine()));
      expect(await one.saw('"event":"stream"')).toBe(true);
      const two = await world().perks(['build'], env(world().machine()));
      expect(two.code).toBe(5);
      expect(messages(two)).toEqual([expect.stringMatching(/is in use by another run \(`perks run` pid \d+ on /)]);
      expect((await one.done).code).toBe(0);
      expect(front.refused).toBeGreaterThanOrEqual(2); // the probe's second create, the second run's lease
      const objects = await world().objects('conditional');
      expect(objects.has('_perks/lease.json')).toBe(false);
      const after = await world().perks(['build'], env(world().machine()));
      expect(after.code, after.stderr).toBe(0);

      // a lease left by a process that died on this host (same boot and PID namespace) is taken over at once;
      // a live one is not
      const client = s3Client(world().s3);
      const { host, boot_id, pid_ns } = processIdentity();
      const lease = (pid: number) =>
        client.send(
          new PutObjectCommand({
            Bucket: world().s3.bucket,
            Key: 'conditional/_perks/lease.json',
            Body: JSON.stringify({
              token: 'x',
              host,
              boot_id,
              pid_ns,
              pid,
              command: 'run',
              started_at: new Date().toISOString(),
              heartbeat_at: new Date().toISOString(),
            }),
          }),
        );
      await lease(process.pid);
      const live = await world().perks(['compact'], env(world().machine()));
      expect(live.code).toBe(5);
      await lease(2 ** 22 + 17); // above Linux's pid_max default: no such process
      const dead = await world().perks(['compact'], env(world().machine()));
      expect(dead.code, dead.stderr).toBe(0);
      expect((await world().objects('conditional')).has('_perks/lease.json')).toBe(false);
      client.destroy();
    } finally {
      await front.stop();
    }
  }, 300_000);
});
