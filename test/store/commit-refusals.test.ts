/**
 * Issue 50: a commit the store refuses, or finds out of date, says what happened, read from the index itself:
 * another machine's generation (exit 5), another run's lease fencing the index (exit 5), or the service
 * refusing If-Match on the index this command read (exit 2: no other writer, run `perks store check`).
 * "Another machine published" only when the index shows one. Sessions opened in this process, as a command's;
 * on Ceph RGW (no Redis), and on s3rver behind a front that refuses If-Match on the index (with Redis).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { StoreError, StoreLockedError } from '../../src/store/errors.js';
import { StoreSession } from '../../src/store/session.js';
import { parseStoreUrl } from '../../src/store/url.js';
import { rgwClient } from '../support/rgw.js';
import { startConditionalFront } from '../support/s3-conditional.js';
import { s3Client, type TestS3 } from '../support/s3.js';
import { startStoreWorld, type S3rverWorld, type StoreWorld } from '../support/store-world.js';

let rgw: StoreWorld;
let s3rver: S3rverWorld;
const CREDENTIALS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
const savedEnv = CREDENTIALS.map((k) => process.env[k]);
const useCredentials = (s3: TestS3) => {
  for (const k of CREDENTIALS) process.env[k] = s3.env[k];
};

beforeAll(async () => {
  [rgw, s3rver] = await Promise.all([startStoreWorld('rgw'), startStoreWorld()]);
}, 180_000);
afterAll(async () => {
  await rgw?.stop();
  await s3rver?.stop();
  CREDENTIALS.forEach((k, i) => (savedEnv[i] === undefined ? delete process.env[k] : (process.env[k] = savedEnv[i])));
});

/** A `perks build`'s session on `prefix` of the world's bucket, a machine of its own. */
function open(world: StoreWorld, prefix: string, extra: Record<string, string> = {}): Promise<StoreSession> {
  useCredentials(world.s3);
  const env = { ...world.s3.env, PERKS_CACHE_DIR: world.machine(), ...extra };
  const settings = loadConfig(env);
  return StoreSession.open(parseStoreUrl(`s3://${world.s3.bucket}/${prefix}`, 'test'), 'build', {
    settings,
    redisUrl: settings.redisUrl,
  });
}

/** A file the command "wrote" in its working copy (a run manifest). */
function write(session: StoreSession, name: string): void {
  mkdirSync(join(session.copy, 'runs'), { recursive: true });
  writeFileSync(join(session.copy, 'runs', name), JSON.stringify({ run_id: name }));
}

/** The store's index, changed as another writer would: `change` over it, written without a condition. */
async function rewriteIndex(client: S3Client, bucket: string, prefix: string, change: Record<string, unknown>) {
  const Key = `${prefix}/_perks/index.json`;
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
  const index = JSON.parse(await got.Body!.transformToString()) as Record<string, unknown>;
  await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: JSON.stringify({ ...index, ...change }) }));
}

async function refusal(session: StoreSession): Promise<StoreError> {
  const error = await session.publish().then(
    () => undefined,
    (e: unknown) => e,
  );
  await session.close();
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

test('on RGW: another machine publishing meanwhile is named by its generation, a lease taken over by its fence (exit 5)', async () => {
  const client = rgwClient(rgw.s3.endpoint);
  try {
    const first = await open(rgw, 'moved');
    write(first, 'one.json');
    expect((await first.publish())?.generation).toBe(1);
    write(first, 'two.json');
    // a writer that stalled past its TTL commits over it (the fence makes that impossible through perks)
    await rewriteIndex(client, rgw.s3.bucket, 'moved', {
      generation: 2,
      published_at: '2026-11-22T12:34:56.000Z',
      by: { host: 'other.example', pid: 77, command: 'run' },
    });
    const moved = await refusal(first);
    expect(moved).toBeInstanceOf(StoreLockedError);
    expect(moved.exitCode).toBe(ExitCode.locked);
    expect(moved.message).toMatch(
      /^the store s3:\/\/\S+\/moved at \S+ changed while this command ran: another machine published generation 2 \(`perks run` pid 77 on other\.example, at 2026-11-22T12:34:56\.000Z; this command read generation 1\): nothing of this command was committed; run it again$/,
    );

    const second = await open(rgw, 'fenced');
    write(second, 'one.json');
    await second.publish();
    write(second, 'two.json');
    await rewriteIndex(client, rgw.s3.bucket, 'fenced', { lease: 'another-runs-token' });
    const fenced = await refusal(second);
    expect(fenced.exitCode).toBe(ExitCode.locked);
    expect(fenced.message).toContain('another run took its lease over and fenced the index (generation 1)');
    expect(fenced.message).not.toContain('another machine published');
  } finally {
    client.destroy();
  }
});

test('a service refusing If-Match on the index this command read is said to be so (exit 2), nothing committed, not "another machine"', async () => {
  // what RGW did to every commit before the probe learnt its form: 412 to If-Match, the index unchanged
  const front = await startConditionalFront(s3rver.s3.endpoint, (req) =>
    req.method === 'PUT' && req.headers['if-match'] && req.url?.includes('/_perks/index.json')
      ? {
          status: 412,
          code: 'PreconditionFailed',
          message: 'At least one of the pre-conditions you specified did not hold',
        }
      : undefined,
  );
  const client = s3Client(s3rver.s3);
  try {
    const session = await open(s3rver, 'dialect', {
      AWS_ENDPOINT_URL_S3: front.endpoint,
      PERKS_REDIS_URL: s3rver.redis.url,
    });
    write(session, 'one.json');
    expect((await session.publish())?.generation).toBe(1); // the first commit: If-None-Match
    write(session, 'two.json');
    const error = await refusal(session);
    expect(error).not.toBeInstanceOf(StoreLockedError);
    expect(error.exitCode).toBe(ExitCode.config);
    expect(error.message).toMatch(
      /^the store s3:\/\/\S+\/dialect at \S+ refused the commit's conditional write \(HTTP 412 to If-Match on the index's current ETag "[0-9a-f]+"\): the service does not honour If-Match as it was probed; run `perks store check`/,
    );
    expect(error.message).not.toContain('another machine');
    const index = await client.send(
      new GetObjectCommand({ Bucket: s3rver.s3.bucket, Key: 'dialect/_perks/index.json' }),
    );
    expect((JSON.parse(await index.Body!.transformToString()) as { generation: number }).generation).toBe(1);
  } finally {
    client.destroy();
    await front.stop();
  }
});
