/**
 * `npm run bench -- store [scale]`: the output in object storage (s3rver and Redis on loopback).
 *   1. day 0: a full `perks run` on machine A; machine W takes a copy (`perks status`);
 *   2. day 1 (the sandbox a day later): `perks run` on A: bytes uploaded against the bytes of the files
 *      that changed (goal ≤ 1.2), bytes downloaded, requests;
 *   3. W, a day behind, runs `perks build`: what it downloads against what changed;
 *   4. a fresh machine F runs `perks build`: the time before its build can start, and what it
 *      downloads against the whole store (it needs only what the build reads).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../src/sandbox/index.js';
import { startRedis } from '../test/support/redis.js';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { s3Client, startS3 } from '../test/support/s3.js';

const scale = (process.argv[2] ?? 'small') as 'tiny' | 'small' | 'medium';
const root = mkdtempSync(join(tmpdir(), 'perks-bench-store-'));

interface StoreEvent {
  pulled: { files: number; bytes: number; ms: number };
  published: { files: number; changedBytes: number; removed: number };
  requests: Record<string, number>;
  bytesUp: number;
  bytesDown: number;
}

function perks(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; event: StoreEvent; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, ['bin/perks.mjs', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) =>
    child.once('close', (code) => {
      const line = stderr.split('\n').find((l) => l.includes('"event":"store"'));
      if (!line || code !== 0) console.error(stderr.slice(-2000));
      done({ code, event: JSON.parse(line ?? '{}') as StoreEvent, ms: Date.now() - started });
    }),
  );
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

const s3 = await startS3();
const redis = await startRedis();
const sandbox = await startSandbox({ port: 0, scale, seed: 7, rateLimit: 1_000_000, tokenRateLimit: 1000 });
try {
  const org = sandbox.credentials.organisation;
  const env = (machine: string) => ({
    ...s3.env,
    PERKS_BASE_URL: sandbox.baseUrl,
    PERKS_CLIENT_ID: String(org.client_id),
    PERKS_CLIENT_SECRET: org.client_secret,
    PERKS_GROUP_IDS: org.organisation_group_ids.join(','),
    PERKS_RATE_LIMIT: '1000000',
    PERKS_OUTPUT: `s3://${s3.bucket}/bench`,
    PERKS_CACHE_DIR: join(root, machine),
    PERKS_REDIS_URL: redis.url,
    PERKS_NOW: `${sandbox.world.today}T12:00:00Z`,
  });
  console.log(`store bench: ${scale} sandbox, s3rver and Redis on loopback`);
  const day0 = await perks(['run'], env('A'));
  console.log(
    `day 0  full run on A: ${day0.ms} ms; published ${day0.event.published.files} files, ${mb(day0.event.published.changedBytes)}; ${total(day0.event.requests)} requests`,
  );
  await perks(['status'], env('W'));
  sandbox.advance(1);
  const day1 = await perks(['run'], env('A'));
  const p = day1.event.published;
  console.log(
    `day 1  incremental run on A: files changed ${p.files} (${mb(p.changedBytes)}), removed ${p.removed}; uploaded ${mb(day1.event.bytesUp)} = ${(day1.event.bytesUp / p.changedBytes).toFixed(3)}x the changed bytes (goal <= 1.2); downloaded ${mb(day1.event.bytesDown)}; requests ${total(day1.event.requests)} ${JSON.stringify(day1.event.requests)}`,
  );
  const behind = await perks(['build'], env('W'));
  console.log(
    `       W a day behind, perks build: pulled ${behind.event.pulled.files} files, ${mb(behind.event.pulled.bytes)} in ${behind.event.pulled.ms} ms (downloaded ${mb(behind.event.bytesDown)} with the index)`,
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
  if ([day0, day1, behind, fresh].some((r) => r.code !== 0)) process.exitCode = 1;
} finally {
  await sandbox.close();
  await redis.stop();
  await s3.stop();
  rmSync(root, { recursive: true, force: true });
}
