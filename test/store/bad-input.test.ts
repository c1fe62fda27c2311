/**
 * A store that cannot be used (unreachable, wrong key, no bucket, no permission to write, a clock it refuses)
 * is one line and a documented exit code, with nothing committed; store
 * credentials (a canary secret key, the key id) appear in no output, no file of the working copy and no
 * object of the store, with PERKS_DEBUG=1 on.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { freePort } from '../support/redis.js';
import { s3Client } from '../support/s3.js';
import { startConditionalFront } from '../support/s3-conditional.js';
import { testSandbox } from '../support/sandbox.js';
import { messages, startStoreWorld, type S3rverWorld } from '../support/store-world.js';

let world: S3rverWorld;
let sandbox: Sandbox;
beforeAll(async () => {
  world = await startStoreWorld();
  sandbox = await testSandbox({ seed: 5 });
}, 180_000);
afterAll(async () => {
  await sandbox?.close();
  await world?.stop();
});

async function refused(args: string[], extra: Record<string, string>, prefix: string) {
  const r = await world.perks(args, world.env(sandbox, prefix, world.machine(), extra), 60_000);
  const lines = messages(r);
  expect(lines, r.stderr).toHaveLength(1);
  expect(await world.index(prefix), 'nothing committed').toBeUndefined();
  return { code: r.code, line: lines[0] };
}

describe('a store that cannot be used', () => {
  test('unreachable (exit 1), unknown key (exit 3), missing bucket (exit 2), another scheme or a bad bucket name (exit 2), the demo (exit 2)', async () => {
    const port = await freePort();
    const down = await refused(['extract'], { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` }, 'down');
    expect(down.code).toBe(1);
    expect(down.line).toMatch(
      /^perks: cannot reach the store s3:\/\/perks-test\/down at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    const key = await refused(['build'], { AWS_ACCESS_KEY_ID: 'AKIAWRONGWRONGWRONG1' }, 'key');
    expect(key.code).toBe(3);
    expect(key.line).toMatch(/refused the credentials \(InvalidAccessKeyId\)/);
    expect(key.line).not.toContain('AKIAWRONGWRONGWRONG1');
    const bucket = await world.perks(['status'], {
      ...world.env(sandbox, 'x', world.machine()),
      PERKS_OUTPUT: 's3://no-such-bucket/x',
    });
    expect(bucket.code).toBe(2);
    expect(messages(bucket)).toEqual([
      'perks: the bucket of s3://no-such-bucket/x at ' +
        world.s3.endpoint +
        ' does not exist: create it, or fix PERKS_OUTPUT',
    ]);
    for (const [value, why] of [
      ['gs://perks/team', /no other scheme is supported/],
      ['s3://Perks_Team/x', /is not a bucket name/],
      ['s3://perks-test/a b', /should not hold/],
    ] as const) {
      const r = await world.perks(['run'], { ...world.env(sandbox, 'x', world.machine()), PERKS_OUTPUT: value });
      expect(r.code).toBe(2);
      expect(messages(r)).toEqual([expect.stringMatching(why)]);
    }
    const demo = await world.perks(['demo'], world.env(sandbox, 'demo', world.machine()));
    expect(demo.code).toBe(2);
    expect(messages(demo)).toEqual([expect.stringMatching(/the demo writes a local folder/)]);
  }, 300_000);

  test('a prefix written by a newer format (exit 2), one holding other files (exit 2), and a service without conditional writes and no Redis (exit 2)', async () => {
    const client = s3Client(world.s3);
    await client.send(
      new PutObjectCommand({
        Bucket: world.s3.bucket,
        Key: 'newer/_perks/index.json',
        Body: JSON.stringify({ format: 99, generation: 3 }),
      }),
    );
    await client.send(new PutObjectCommand({ Bucket: world.s3.bucket, Key: 'foreign/data.csv', Body: 'a,b\n' }));
    client.destroy();
    const newer = await world.perks(['run'], world.env(sandbox, 'newer', world.machine()));
    expect(newer.code).toBe(2);
    expect(messages(newer)).toEqual([
      expect.stringMatching(/written by a newer perks \(store format 99; this one reads 1\): upgrade perks/),
    ]);
    const foreign = await world.perks(['build'], world.env(sandbox, 'foreign', world.machine()));
    expect(foreign.code).toBe(2);
    expect(messages(foreign)).toEqual([expect.stringMatching(/holds objects \(data\.csv\) but no perks index/)]);
    const unlocked = await refused(['build'], { PERKS_REDIS_URL: '' }, 'unlocked');
    expect(unlocked.code).toBe(2);
    expect(unlocked.line).toMatch(
      /does not enforce conditional writes \(it accepted a second create of one object with If-None-Match: \*.*; it accepted a write with If-Match on a stale ETag.*\).*set PERKS_REDIS_URL/,
    );
  }, 300_000);

  test('the bucket’s root holding other objects is refused with one line (exit 2), not an HTTP 500; an index copied without its objects names them (exit 2)', async () => {
    const stray = s3Client(world.s3);
    await stray.send(new PutObjectCommand({ Bucket: world.s3.bucket, Key: 'stray.csv', Body: 'a,b\n' }));
    stray.destroy();
    const root = await world.perks(['build'], {
      ...world.env(sandbox, 'x', world.machine()),
      PERKS_OUTPUT: `s3://${world.s3.bucket}`,
    });
    expect(root.code, root.stderr).toBe(2);
    expect(messages(root), root.stderr).toEqual([expect.stringMatching(/holds objects \(.+\) but no perks index/)]);

    const made = await world.perks(['extract', '--streams', 'groups'], world.env(sandbox, 'whole', world.machine()));
    expect(made.code, made.stderr).toBe(0);
    const client = s3Client(world.s3);
    const index = (await world.objects('whole')).get('_perks/index.json')!;
    await client.send(new PutObjectCommand({ Bucket: world.s3.bucket, Key: 'bare/_perks/index.json', Body: index }));
    client.destroy();
    for (const command of ['status', 'extract']) {
      const r = await world.perks([command, '--streams', 'groups'].slice(0, command === 'status' ? 1 : 3), {
        ...world.env(sandbox, 'bare', world.machine()),
      });
      expect(r.code, r.stderr).toBe(2);
      expect(messages(r), r.stderr).toEqual([
        expect.stringMatching(
          /^perks: the store s3:\/\/perks-test\/bare .* is not whole: .* \d+ objects? it names (is|are) missing \(s3:\/\/perks-test\/bare\/.+\); the index was copied without its objects/,
        ),
      ]);
    }
  }, 300_000);

  test('no permission to write (exit 3) and a clock the service refuses (exit 2): one line each, nothing committed', async () => {
    const readOnly = await startConditionalFront(world.s3.endpoint, (req) =>
      req.method === 'PUT' || req.method === 'DELETE'
        ? { status: 403, code: 'AccessDenied', message: 'Access Denied' }
        : undefined,
    );
    const skewed = await startConditionalFront(world.s3.endpoint, () => ({
      status: 403,
      code: 'RequestTimeTooSkewed',
      message: 'The difference between the request time and the current time is too large.',
    }));
    try {
      const denied = await refused(['extract'], { AWS_ENDPOINT_URL_S3: readOnly.endpoint }, 'read-only');
      expect(denied.code).toBe(3);
      expect(denied.line).toMatch(
        /^perks: no permission to .* \(AccessDenied\): the credentials need s3:GetObject, s3:PutObject/,
      );
      const clock = await refused(['status'], { AWS_ENDPOINT_URL_S3: skewed.endpoint }, 'skewed');
      expect(clock.code).toBe(2);
      expect(clock.line).toMatch(/refuses this machine's clock \(.*RequestTimeTooSkewed\): set the clock right/);
    } finally {
      await readOnly.stop();
      await skewed.stop();
    }
  }, 300_000);

  test('a canary secret access key appears in no output, working-copy file or store object (PERKS_DEBUG=1, a crash, a failure)', async () => {
    const secret = 'CanaryAwsSecret/Key+9f3Zq7Xw2LmN0pR5tUvY';
    const copy = world.machine();
    const env = world.env(sandbox, 'canary', copy, { AWS_SECRET_ACCESS_KEY: secret, PERKS_DEBUG: '1' });
    const outputs: string[] = [];
    // killed after its commit, the next run finishes that publish, then one refused for a wrong key
    const runs: Record<string, string>[] = [
      { PERKS_CRASH_AT: 'store-after-commit' },
      { PERKS_CRASH_AT: 'after-page:2' },
      { AWS_ACCESS_KEY_ID: 'NOPE' },
    ];
    for (const extra of runs) {
      const r = await world.perks(['run'], { ...env, ...extra });
      outputs.push(r.stdout, r.stderr);
    }
    const files = (readdirSync(copy, { recursive: true }) as string[])
      .map((f) => join(copy, f))
      .filter((f) => statSync(f).isFile());
    const objects = await world.objects('canary');
    expect(objects.size).toBeGreaterThan(10);
    const needles = [secret, encodeURIComponent(secret), secret.slice(0, 12), secret.slice(-12)];
    const hits = [
      ...outputs.map((o, i) => [`output ${i}`, o] as const),
      ...files.map((f) => [f, readFileSync(f).toString('latin1')] as const),
      ...[...objects].map(([k, b]) => [k, b.toString('latin1')] as const),
    ].filter(([, text]) => needles.some((n) => text.includes(n)));
    expect(hits.map(([where]) => where)).toEqual([]);
  }, 600_000);
});
