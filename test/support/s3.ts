/**
 * A real S3-protocol server for the store tests and the bench: s3rver (in this process, loopback, port 0,
 * objects in a temporary folder), with a bucket made through the AWS SDK. It answers GET, PUT, HEAD,
 * DELETE and ListObjectsV2 like S3, but does not enforce If-None-Match / If-Match on PUT: the tests take
 * the store's lock through Redis (PERKS_REDIS_URL), as the code requires on such a service. Its store is made
 * to replace an object whole, as S3 does (s3rver-whole-writes.ts).
 */
import { rmSync } from 'node:fs';
import S3rver from 's3rver';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { replaceObjectsWhole } from './s3rver-whole-writes.js';
import { tempOut } from './scratch.js';

export const S3_KEY_ID = 'S3RVER';
export const S3_SECRET = 'S3RVER';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the objects (its own layout: tests read objects through the SDK). */
  dir: string;
  /** The environment a perks process needs to reach it (plus PERKS_OUTPUT=s3://bucket/…). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3(bucket = 'perks-test'): Promise<TestS3> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dir = tempOut('perks-s3rver-');
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
  replaceObjectsWhole(server.store);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const env = {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: S3_KEY_ID,
    AWS_SECRET_ACCESS_KEY: S3_SECRET,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const client = s3Client({ endpoint });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    endpoint,
    bucket,
    dir,
    env,
    stop: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An SDK client on a test server (path-style; its credentials from its env, else s3rver's fixed ones). */
export function s3Client(s3: { endpoint: string; env?: Record<string, string> }): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: s3.env?.AWS_ACCESS_KEY_ID ?? S3_KEY_ID,
      secretAccessKey: s3.env?.AWS_SECRET_ACCESS_KEY ?? S3_SECRET,
    },
  });
}
