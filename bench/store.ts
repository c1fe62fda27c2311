/**
 * `npm run bench -- store [scale]`: the output in object storage (s3rver and Redis on loopback);
 * `npm run bench -- store-rgw`: the same on Ceph RGW (test/support/rgw.ts), the lease in the store itself.
 *   1. day 0: a full `perks run` on machine A; machine W takes a copy (`perks status`);
 *   2. day 1 (the sandbox a day later): `perks run` on A: bytes uploaded against the bytes of the files
 *      that changed (goal ≤ 1.2), and its PUTs by kind of key (the files, the staged views, the index, the
 *      intent, the readers' manifests, the write-ahead pieces: counted at a front before s3rver), bytes
 *      downloaded, requests; the warehouse's pieces (seed/) that moved against the whole warehouse.duckdb
 *      the store no longer uploads;
 *   3. W, a day behind, runs `perks build`: what it downloads against what changed;
 *   4. a fresh machine F runs `perks build`: the time before its build can start, and what it
 *      downloads against the whole store (it needs only what the build reads);
 *   5. day 2: A extracts; the store is copied whole to a twin prefix; A builds on the store, a fresh machine
 *      on the twin: the fresh copy's build against the original's (the same models kept and rebuilt, time,
 *      bytes pulled);
 *   6. an extract killed half-way through its calls (a store of its own, paced to ~25 s, a checkpoint a
 *      second), continued on a fresh machine: its calls against a whole extract's (goal <= 0.6).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../src/sandbox/index.js';
import { startRedis } from '../test/support/redis.js';
import { CopyObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { s3Client, startS3 } from '../test/support/s3.js';
import { startConditionalFront } from '../test/support/s3-conditional.js';
import { startRgw } from '../test/support/rgw.js';
import { startStoreWorld } from '../test/support/store-world.js';
import { extractKilledAt } from '../test/support/killed-extract.js';

const scale = (process.argv[2] ?? 'small') as 'tiny' | 'small' | 'medium';
const rgw = process.argv[3] === 'rgw';
const root = mkdtempSync(join(tmpdir(), 'perks-bench-store-'));

interface StoreEvent {
  pulled: { files: number; bytes: number; ms: number };
  published: { files: number; changed_bytes: number; removed: number };
  requests: Record<string, number>;
  bytes_up: number;
  bytes_down: number;
}

function perks(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; event: StoreEvent; ms: number; stdout: string }> {
  const started = Date.now();
  const child = spawn(process.execPath, ['bin/perks.mjs', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) =>
    child.once('close', (code) => {
      const line = stderr.split('\n').find((l) => l.includes('"event":"store"'));
      if (!line || code !== 0) console.error(stderr.slice(-2000));
      done({ code, event: JSON.parse(line ?? '{}') as StoreEvent, ms: Date.now() - started, stdout });
    }),
  );
}

/** Every object under `from/` copied under `to/`: a second store that is the first's twin. */
async function copyPrefix(client: S3Client, bucket: string, from: string, to: string): Promise<void> {
  let token: string | undefined;
  do {
    const r = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${from}/`, ContinuationToken: token }),
    );
    for (const o of r.Contents ?? [])
      await client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: `${to}/${o.Key!.slice(from.length + 1)}`,
          CopySource: encodeURI(`${bucket}/${o.Key!}`),
        }),
      );
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
}

/** The committed files of the store at `prefix`: path → key and size. */
async function storeFiles(client: S3Client, bucket: string, prefix: string) {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/_perks/index.json` }));
  const text = Buffer.from(await got.Body!.transformToByteArray()).toString('utf8');
  return (JSON.parse(text) as { files: Record<string, { key: string; size: number }> }).files;
}

/** The seed's pieces (seed/) in `after` whose object differs from `before`'s: how many and their bytes. */
function seedMoved(before: Record<string, { key: string }>, after: Record<string, { key: string; size: number }>) {
  const seed = Object.entries(after).filter(([p]) => p.startsWith('seed/') && p.endsWith('.parquet'));
  const moved = seed.filter(([p, e]) => before[p]?.key !== e.key);
  const bytes = (list: typeof seed) => list.reduce((n, [, e]) => n + e.size, 0);
  const monthly = (list: typeof seed) => list.filter(([p]) => p.split('/').length === 3); // seed/<model>/<month>
  return {
    pieces: seed.length,
    bytes: bytes(seed),
    moved: moved.length,
    movedBytes: bytes(moved),
    months: monthly(seed).length,
    monthsMoved: monthly(moved).length,
    monthsMovedBytes: bytes(monthly(moved)),
  };
}

/** The size of machine `machine`'s working-copy warehouse. */
function warehouseSize(machine: string): number {
  const dir = join(root, machine);
  const found = readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((p) => p.endsWith('warehouse.duckdb'));
  return found ? statSync(join(dir, found)).size : 0;
}

/** A build's summary: which models were kept and rebuilt, and which months (lines naming files left out). */
const buildWork = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l && !l.includes('/'))
    .join('\n');

/** What a PUT's key is to the store: the day's files, or the publish's own objects (index, intent, manifests). */
function kindOf(url: string): string {
  const key = decodeURIComponent(url.split('?')[0]).split('/').slice(3).join('/'); // /<bucket>/bench/<path>
  if (key === '_perks/index.json') return 'index';
  if (key === '_perks/intent.json') return 'intent';
  if (key.startsWith('_perks/wal/')) return 'wal';
  if (key.startsWith('_perks/views/')) return 'views';
  if (key.startsWith('_perks/')) return 'lease';
  if (key.startsWith('lake/_symlink/')) return 'symlinks';
  if (/^lake\/[^/]+\/_current\.json$/.test(key)) return 'current';
  return 'files';
}

/** PUTs by kind of key: count and bytes. */
const puts = new Map<string, { n: number; bytes: number }>();
const putsLine = () =>
  [...puts]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([k, v]) => `${k} ${v.n} ${mb(v.bytes)}`)
    .join(', ');

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

const s3 = rgw ? await startRgw() : await startS3();
// a front that counts every PUT by kind of key (and enforces If-Match/If-None-Match as S3 does; RGW does itself)
const front = await startConditionalFront(
  s3.endpoint,
  (req) => {
    if (req.method === 'PUT' && !req.headers['x-amz-copy-source']) {
      const kind = puts.get(kindOf(req.url ?? '')) ?? { n: 0, bytes: 0 };
      kind.n++;
      kind.bytes += Number(req.headers['content-length'] ?? 0);
      puts.set(kindOf(req.url ?? ''), kind);
    }
    return undefined;
  },
  !rgw,
);
const redis = rgw ? undefined : await startRedis();
const sandbox = await startSandbox({ port: 0, scale, seed: 7, rateLimit: 1_000_000, tokenRateLimit: 1000 });
try {
  const org = sandbox.credentials.organisation;
  const env = (machine: string) => ({
    ...s3.env,
    AWS_ENDPOINT_URL_S3: front.endpoint,
    PERKS_BASE_URL: sandbox.baseUrl,
    PERKS_CLIENT_ID: String(org.client_id),
    PERKS_CLIENT_SECRET: org.client_secret,
    PERKS_GROUP_IDS: org.organisation_group_ids.join(','),
    PERKS_RATE_LIMIT: '1000000',
    PERKS_OUTPUT: `s3://${s3.bucket}/bench`,
    PERKS_CACHE_DIR: join(root, machine),
    ...(redis ? { PERKS_REDIS_URL: redis.url } : {}),
    PERKS_NOW: `${sandbox.world.today}T12:00:00Z`,
  });
  console.log(
    `store bench: ${scale} sandbox, ${rgw ? 'Ceph RGW (the lease in the store, no Redis)' : 's3rver and Redis'} on loopback`,
  );
  const day0 = await perks(['run'], env('A'));
  console.log(
    `day 0  full run on A: ${day0.ms} ms; published ${day0.event.published.files} files, ${mb(day0.event.published.changed_bytes)}; ${total(day0.event.requests)} requests`,
  );
  await perks(['status'], env('W'));
  const seedClient = s3Client(s3);
  const filesDay0 = await storeFiles(seedClient, s3.bucket, 'bench');
  sandbox.advance(1);
  puts.clear();
  const day1 = await perks(['run'], env('A'));
  const p = day1.event.published;
  console.log(
    `day 1  incremental run on A: files changed ${p.files} (${mb(p.changed_bytes)}), removed ${p.removed}; uploaded ${mb(day1.event.bytes_up)} = ${(day1.event.bytes_up / p.changed_bytes).toFixed(3)}x the changed bytes (goal <= 1.2); downloaded ${mb(day1.event.bytes_down)}; requests ${total(day1.event.requests)} ${JSON.stringify(day1.event.requests)}`,
  );
  console.log(`       day 1's PUTs by kind of key (count, bytes): ${putsLine()}`);
  const seed = seedMoved(filesDay0, await storeFiles(seedClient, s3.bucket, 'bench'));
  seedClient.destroy();
  const wholeFile = warehouseSize('A');
  console.log(
    `       the warehouse in the store: ${seed.pieces} Parquet pieces (seed/), ${mb(seed.bytes)}; day 1 moved ${seed.moved} of them, ${mb(seed.movedBytes)} = ${(seed.movedBytes / wholeFile).toFixed(3)}x A's warehouse.duckdb (${mb(wholeFile)}), which the store no longer uploads; of the ${seed.months} month pieces of the models built by intervals, ${seed.monthsMoved} moved (${mb(seed.monthsMovedBytes)}: the months the day's extract changed), the rest the whole tables (the per-user ones rebuilt daily)`,
  );
  const behind = await perks(['build'], env('W'));
  console.log(
    `       W a day behind, perks build: pulled ${behind.event.pulled.files} files, ${mb(behind.event.pulled.bytes)} in ${behind.event.pulled.ms} ms (downloaded ${mb(behind.event.bytes_down)} with the index)`,
  );
  const fresh = await perks(['build'], env('F'));
  const all = await perks(['sql', 'SELECT 1'], env('G')); // pulls what sql reads: the core and the warehouse, marts
  console.log(
    `       fresh machine F, perks build: ${fresh.event.pulled.files} files, ${mb(fresh.event.pulled.bytes)} before the build could start, in ${fresh.event.pulled.ms} ms (perks sql, which also reads the warehouse and marts: ${all.event.pulled.files} files, ${mb(all.event.pulled.bytes)})`,
  );
  const client = s3Client(s3);
  const index = JSON.parse(
    Buffer.from(
      await (
        await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'bench/_perks/index.json' }))
      ).Body!.transformToByteArray(),
    ).toString('utf8'),
  ) as { files: Record<string, { size: number }> };
  client.destroy();
  const sizes = Object.values(index.files);
  console.log(
    `       the store: ${sizes.length} committed files, ${mb(sizes.reduce((n, f) => n + f.size, 0))} (the index itself ${mb(JSON.stringify(index).length)}); day 0's requests ${JSON.stringify(day0.event.requests)} (the write-back's write-ahead: one PUT per batch of 4 posts)`,
  );
  sandbox.advance(1);
  const day2 = await perks(['extract'], env('A'));
  const twinClient = s3Client(s3);
  await copyPrefix(twinClient, s3.bucket, 'bench', 'bench-twin');
  twinClient.destroy();
  const original = await perks(['build'], env('A'));
  const twin = await perks(['build'], { ...env('T'), PERKS_OUTPUT: `s3://${s3.bucket}/bench-twin` });
  const same = buildWork(original.stdout) === buildWork(twin.stdout);
  console.log(
    `day 2  next-day build, original machine A: ${original.ms} ms, pulled ${mb(original.event.pulled.bytes)}; a fresh copy of the same store: ${twin.ms} ms (${(twin.ms / original.ms).toFixed(2)}x), pulled ${twin.event.pulled.files} files, ${mb(twin.event.pulled.bytes)} in ${twin.event.pulled.ms} ms; models kept and rebuilt ${same ? 'the same' : 'DIFFERENT'}: ${buildWork(original.stdout).split('\n')[0]}`,
  );
  if (!same) console.error(`original:\n${buildWork(original.stdout)}\nfresh copy:\n${buildWork(twin.stdout)}`);

  const world = rgw ? await startStoreWorld('rgw') : await startStoreWorld();
  const twins = [0, 1].map(() => startSandbox({ port: 0, scale, seed: 7, rateLimit: 1_000_000, tokenRateLimit: 1000 }));
  const [whole, killed] = await Promise.all(twins);
  try {
    const k = await extractKilledAt(world, whole, killed, 0.5, 'killed');
    const ratio = k.rerunCalls / k.wholeCalls;
    console.log(
      `killed extract: killed at ${k.killedCalls} of a whole extract's ${k.wholeCalls} calls after ${k.checkpoints} checkpoints; the rerun on a fresh machine made ${k.rerunCalls} calls = ${ratio.toFixed(3)} of a whole extract (goal <= 0.6)${k.problems.length ? `; ${k.problems.join('; ')}` : ''}`,
    );
    if (ratio > 0.6 || k.problems.length) process.exitCode = 1;
  } finally {
    await whole.close();
    await killed.close();
    await world.stop();
  }
  if ([day0, day1, behind, fresh, day2, original, twin].some((r) => r.code !== 0) || !same) process.exitCode = 1;
} finally {
  await sandbox.close();
  await front.stop();
  await redis?.stop();
  await s3.stop();
  rmSync(root, { recursive: true, force: true });
}
