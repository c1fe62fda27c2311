/**
 * The store tests' world: a real S3-protocol server and, where it does not enforce conditional writes, a
 * Redis (the store's lock), both on loopback and started here; sandboxes over real HTTP; perks as child
 * processes, each with its own working copy (a "machine"). The server: s3rver with Redis (fast, in this
 * process), or Ceph RGW without (rgw.ts: a real S3 server that enforces If-None-Match and If-Match).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startRedis, type TestRedis } from './redis.js';
import { runCli, startCli, type CliResult, type RunningCli } from './cli.js';
import { rgwClient, startRgw } from './rgw.js';
import { s3Client, startS3, type TestS3 } from './s3.js';
import { orgEnv } from './sandbox.js';

export interface StoreWorld {
  s3: TestS3;
  /** s3rver's lock; none on RGW (the lease lives in the store). */
  redis?: TestRedis;
  /** A fresh working-copy folder (another machine). */
  machine(): string;
  /** The environment of a perks process on `machine` against `prefix` of the bucket. */
  env(sandbox: Sandbox, prefix: string, machine: string, extra?: Record<string, string>): Record<string, string>;
  perks(args: string[], env: Record<string, string>, timeoutMs?: number): Promise<CliResult>;
  start(args: string[], env: Record<string, string>): RunningCli;
  /** Every object under the prefix: key → body. */
  objects(prefix: string): Promise<Map<string, Buffer>>;
  index(
    prefix: string,
  ): Promise<
    { generation: number; files: Record<string, { key: string; size: number }>; garbage: string[] } | undefined
  >;
  stop(): Promise<void>;
}

/** The s3rver world: its Redis always there. */
export type S3rverWorld = StoreWorld & { redis: TestRedis };

export async function startStoreWorld(): Promise<S3rverWorld>;
export async function startStoreWorld(server: 'rgw'): Promise<StoreWorld>;
export async function startStoreWorld(server: 's3rver' | 'rgw' = 's3rver'): Promise<StoreWorld> {
  const s3 = server === 'rgw' ? await startRgw() : await startS3();
  const redis = server === 'rgw' ? undefined : await startRedis();
  const dirs: string[] = [];
  const client = server === 'rgw' ? rgwClient(s3.endpoint) : s3Client(s3);
  const objects = async (prefix: string) => {
    const out = new Map<string, Buffer>();
    let token: string | undefined;
    do {
      const r = await client.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
      );
      for (const o of r.Contents ?? []) {
        const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key! }));
        out.set(o.Key!.slice(prefix.length + 1), Buffer.from(await got.Body!.transformToByteArray()));
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  return {
    s3,
    redis,
    machine() {
      const dir = mkdtempSync(join(tmpdir(), 'perks-machine-'));
      dirs.push(dir);
      return join(dir, 'copy');
    },
    env: (sandbox, prefix, machine, extra = {}) => ({
      ...orgEnv(sandbox, `s3://${s3.bucket}/${prefix}`),
      ...s3.env,
      ...(redis ? { PERKS_REDIS_URL: redis.url } : {}),
      PERKS_CACHE_DIR: machine,
      ...extra,
    }),
    perks: (args, env, timeoutMs = 240_000) => runCli(args, env, { timeoutMs }),
    start: (args, env) => startCli(args, env),
    objects,
    async index(prefix) {
      const all = await objects(prefix);
      const text = all.get('_perks/index.json');
      return text ? (JSON.parse(text.toString('utf8')) as Awaited<ReturnType<StoreWorld['index']>>) : undefined;
    },
    async stop() {
      client.destroy();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      await redis?.stop();
      await s3.stop();
    },
  };
}

/** The lines of a run's stderr that are not progress events (one JSON object a line). */
export function messages(r: CliResult): string[] {
  return r.stderr.split('\n').filter((l) => l && !l.startsWith('{'));
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
