/**
 * The S3 client, configured the AWS SDK's own way: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for an
 * S3-compatible service, AWS_REGION, credentials from the SDK's default chain (environment, profile,
 * SSO, web identity, instance metadata). Path-style addressing when the endpoint is an IP address or
 * localhost, or PERKS_S3_PATH_STYLE=1. Every request is counted (requests by kind, bytes each way:
 * `npm run bench -- store`), every failure mapped to one line and an exit code (errors.ts).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { commitDurably, tempPathFor } from '../shared/durable-file.js';
import { registerSecret } from '../shared/redact.js';
import { quietAwsSdk, type StoreSettings } from '../config/index.js';
import { PreconditionFailed, isNotFound, isPreconditionFailed, storeFailure } from './errors.js';
import { etagIn, type IfMatchForm } from './etag.js';
import { keyOf, type StoreUrl } from './url.js';

export interface StoreCounters {
  requests: Record<'get' | 'put' | 'copy' | 'head' | 'delete' | 'list', number>;
  bytesUp: number;
  bytesDown: number;
}

export interface ObjectInfo {
  etag: string;
  size: number;
}

/** Above this a file is streamed to the store rather than read whole (PutObject takes up to 5 GB). */
const BUFFER_LIMIT = 32 * 1024 * 1024;

export interface ClientSettings {
  endpoint?: string;
  region?: string;
  pathStyle: boolean;
}

/** The SDK settings (the SDK's own variables, read by src/config), for the client and messages. */
export function clientSettings(env: StoreSettings): ClientSettings {
  const endpoint = env.awsEndpointUrlS3 || env.awsEndpointUrl || undefined;
  let host = '';
  if (endpoint) {
    try {
      host = new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
    } catch {
      host = '';
    }
  }
  const local = host === 'localhost' || host.endsWith('.localhost') || isIP(host) !== 0;
  return {
    endpoint,
    region: env.awsRegion || env.awsDefaultRegion || (endpoint ? 'us-east-1' : undefined),
    pathStyle: env.s3PathStyle || local,
  };
}

export class StoreClient {
  readonly counters: StoreCounters = {
    requests: { get: 0, put: 0, copy: 0, head: 0, delete: 0, list: 0 },
    bytesUp: 0,
    bytesDown: 0,
  };
  private readonly s3: S3Client;
  /** The store as messages name it: URL and endpoint, never a credential. */
  readonly where: string;
  /**
   * How `If-Match` is sent (probe.ts learns it): the ETag quoted (AWS S3, MinIO, R2) or bare (Ceph RGW 16), or
   * `off` where the service refuses it even for the current ETag (then only with Redis: the HEAD before a
   * commit stands in for it).
   */
  ifMatchForm: IfMatchForm | 'off' = 'quoted';

  constructor(
    readonly store: StoreUrl,
    env: StoreSettings,
  ) {
    quietAwsSdk();
    registerSecret(env.awsSecretAccessKey);
    registerSecret(env.awsSessionToken);
    const settings = clientSettings(env);
    this.where = `${store.url}${settings.endpoint ? ` at ${safeEndpoint(settings.endpoint)}` : ''}`;
    this.s3 = new S3Client({
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.region ? { region: settings.region } : {}),
      forcePathStyle: settings.pathStyle,
      maxAttempts: 4,
      // Checksums only where the service requires them: several S3-compatible services refuse the SDK's
      // default trailing checksums (aws-chunked uploads).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
    });
  }

  url(path: string): string {
    return `s3://${this.store.bucket}/${keyOf(this.store, path)}`;
  }

  private fail(err: unknown, op: string, path: string): never {
    throw storeFailure(err, `${op} ${this.url(path)}`, this.where);
  }

  /** An object's bytes and ETag; undefined when it does not exist. */
  async get(path: string): Promise<{ body: Buffer; etag: string } | undefined> {
    this.counters.requests.get++;
    try {
      const r = await this.s3.send(new GetObjectCommand({ Bucket: this.store.bucket, Key: keyOf(this.store, path) }));
      const body = Buffer.from(await r.Body!.transformToByteArray());
      this.counters.bytesDown += body.length;
      return { body, etag: r.ETag ?? '' };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      this.fail(err, 'read', path);
    }
  }

  /** Downloads an object to `file` (written under a temporary name, then renamed); undefined when gone. */
  async getToFile(path: string, file: string, mode: number): Promise<ObjectInfo | undefined> {
    this.counters.requests.get++;
    const temp = tempPathFor(file);
    try {
      const r = await this.s3.send(new GetObjectCommand({ Bucket: this.store.bucket, Key: keyOf(this.store, path) }));
      await pipeline(r.Body as Readable, createWriteStream(temp, { mode }));
      const size = (await stat(temp)).size;
      this.counters.bytesDown += size;
      await commitDurably(temp, file);
      return { etag: r.ETag ?? '', size };
    } catch (err) {
      await rm(temp, { force: true });
      if (isNotFound(err)) return undefined;
      this.fail(err, 'read', path);
    }
  }

  async head(path: string): Promise<ObjectInfo | undefined> {
    this.counters.requests.head++;
    try {
      const r = await this.s3.send(new HeadObjectCommand({ Bucket: this.store.bucket, Key: keyOf(this.store, path) }));
      return { etag: r.ETag ?? '', size: r.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      this.fail(err, 'read', path);
    }
  }

  /**
   * Writes an object; `ifNoneMatch: '*'` creates it only if absent, `ifMatch: etag` replaces only that
   * version (PreconditionFailed when the store refuses: someone else wrote first), the ETag sent in the
   * service's form (`form`, else ifMatchForm).
   */
  async put(
    path: string,
    body: Buffer | { file: string; size: number },
    condition: { ifNoneMatch?: '*'; ifMatch?: string; form?: IfMatchForm } = {},
  ): Promise<ObjectInfo> {
    this.counters.requests.put++;
    const size = Buffer.isBuffer(body) ? body.length : body.size;
    const form = condition.form ?? this.ifMatchForm;
    const ifMatch = condition.ifMatch && form !== 'off' ? etagIn(form, condition.ifMatch) : undefined;
    try {
      const content = Buffer.isBuffer(body)
        ? body
        : body.size <= BUFFER_LIMIT
          ? await readWhole(body.file)
          : createReadStream(body.file);
      const r = await this.s3.send(
        new PutObjectCommand({
          Bucket: this.store.bucket,
          Key: keyOf(this.store, path),
          Body: content,
          ContentLength: size,
          ...(condition.ifNoneMatch ? { IfNoneMatch: condition.ifNoneMatch } : {}),
          ...(ifMatch ? { IfMatch: ifMatch } : {}),
        }),
      );
      this.counters.bytesUp += size;
      return { etag: r.ETag ?? '', size };
    } catch (err) {
      // AWS S3 answers If-Match on a key that no longer exists with 404 NoSuchKey: the version is gone all the same
      if (isPreconditionFailed(err) || (ifMatch && isNotFound(err)))
        throw new PreconditionFailed(`${this.url(path)}: precondition failed`);
      this.fail(err, 'write', path);
    }
  }

  /** Copies an object within the store, on the service (no byte passes through this machine; up to 5 GB). */
  async copy(from: string, to: string): Promise<ObjectInfo> {
    this.counters.requests.copy++;
    // URL-encoded, as S3 wants it; encodeURI keeps `/` and `=` (Hive folders), which s3rver would not decode
    const source = encodeURI(`${this.store.bucket}/${keyOf(this.store, from)}`);
    try {
      const r = await this.s3.send(
        new CopyObjectCommand({ Bucket: this.store.bucket, Key: keyOf(this.store, to), CopySource: source }),
      );
      return { etag: r.CopyObjectResult?.ETag ?? '', size: 0 };
    } catch (err) {
      this.fail(err, 'copy to', to);
    }
  }

  /** Removes an object (absent is fine: deleting is idempotent on S3). */
  async delete(path: string): Promise<void> {
    this.counters.requests.delete++;
    try {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.store.bucket, Key: keyOf(this.store, path) }));
    } catch (err) {
      if (isNotFound(err)) return;
      this.fail(err, 'delete', path);
    }
  }

  /** Paths (relative to the store's prefix) under `under`, at most `limit`. */
  async list(under: string, limit = Infinity): Promise<{ path: string; etag: string; size: number }[]> {
    const out: { path: string; etag: string; size: number }[] = [];
    const base = this.store.prefix ? `${this.store.prefix}/` : '';
    let token: string | undefined;
    do {
      this.counters.requests.list++;
      try {
        const r = await this.s3.send(
          // no Prefix at all for the bucket's root: an empty one is refused by some services (s3rver: HTTP 500)
          new ListObjectsV2Command({
            Bucket: this.store.bucket,
            ...(`${base}${under}` ? { Prefix: `${base}${under}` } : {}),
            ContinuationToken: token,
          }),
        );
        for (const o of r.Contents ?? [])
          if (o.Key) out.push({ path: o.Key.slice(base.length), etag: o.ETag ?? '', size: o.Size ?? 0 });
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } catch (err) {
        this.fail(err, 'list', under || '.');
      }
    } while (token && out.length < limit);
    return out.slice(0, limit);
  }

  destroy(): void {
    this.s3.destroy();
  }
}

async function readWhole(file: string): Promise<Buffer> {
  const { readFile } = await import('node:fs/promises');
  return readFile(file);
}

/** The endpoint without user, password or query (a pre-signed or credentialed URL shows nothing). */
export function safeEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(the endpoint in AWS_ENDPOINT_URL_S3)';
  }
}
