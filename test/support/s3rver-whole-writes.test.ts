/**
 * The test S3 server replaces an object whole, as S3 does (s3rver-whole-writes.ts): the store tests read the
 * index while runs publish it and kill runs half-way through a PUT, and must meet only what S3 would show.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROOT } from './cli.js';
import { S3_KEY_ID, S3_SECRET, s3Client, startS3, type TestS3 } from './s3.js';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3('whole-writes');
});
afterAll(() => s3?.stop());

/** Two versions of one JSON object of different lengths (the index grows and shrinks between commits). */
const versions = [1, 2].map((generation) =>
  JSON.stringify({ generation, files: Array.from({ length: 1500 * generation }, (_, i) => `part-${i}.parquet`) }),
);

const filesLeft = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('receiving'));

test('a GET racing PUTs of the same key reads one whole version, never a torn one', async () => {
  const client = s3Client(s3);
  const put = (body: string) => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'raced.json', Body: body }));
  await put(versions[0]);
  let writing = true;
  const writes = (async () => {
    for (let i = 0; i < 120; i++) await put(versions[i % 2]);
    writing = false;
  })();
  const read: string[] = [];
  while (writing) {
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'raced.json' }));
    read.push(await got.Body!.transformToString());
  }
  await writes;
  client.destroy();
  expect(read.length, 'reads overlapped the writes').toBeGreaterThanOrEqual(10);
  expect(read.filter((body) => !versions.includes(body)).map((body) => body.length)).toEqual([]);
  expect(filesLeft(s3.dir)).toEqual([]);
});

test('a PUT whose client is killed half-way leaves the object as it was, and no temporary file', async () => {
  const client = s3Client(s3);
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'kept.json', Body: versions[0] }));
  // a process that sends half of the new version, then waits to be killed: as a run killed during a commit
  const sender = `
    const { S3Client, PutObjectCommand } = require('@aws-sdk/client-s3');
    const { Readable } = require('node:stream');
    const body = process.env.BODY;
    const half = Readable.from((async function* () { yield body.slice(0, body.length / 2); await new Promise(() => {}); })());
    new S3Client({ endpoint: process.env.ENDPOINT, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: '${S3_KEY_ID}', secretAccessKey: '${S3_SECRET}' } })
      .send(new PutObjectCommand({ Bucket: process.env.BUCKET, Key: 'kept.json', Body: half, ContentLength: body.length }));`;
  const child = spawn(process.execPath, ['-e', sender], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, BODY: versions[1], ENDPOINT: s3.endpoint, BUCKET: s3.bucket },
  });
  for (let i = 0; i < 500 && filesLeft(s3.dir).length === 0; i++) await sleep(20);
  expect(filesLeft(s3.dir), 'the server was receiving the new version').toHaveLength(1);
  child.kill('SIGKILL');
  // the server sees the connection close: wait until it has dropped what it received
  for (let i = 0; i < 250 && filesLeft(s3.dir).length > 0; i++) await sleep(20);
  expect(filesLeft(s3.dir)).toEqual([]);
  const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'kept.json' }));
  expect(await got.Body!.transformToString()).toBe(versions[0]);
  client.destroy();
});
