/** s3rver 3.7 ships no types: what test/support/s3.ts and s3rver-whole-writes.ts use of it. */
declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
  }
  /** An object as s3rver's controllers hand it to the store: the body is the request (a stream) or a Buffer. */
  export interface S3rverObject {
    bucket: string;
    key: string;
    content: Buffer | NodeJS.ReadableStream;
    metadata: Record<string, string>;
  }
  /** Its filesystem store (lib/stores/filesystem.js): an object is `<key>._S3rver_object` beside its metadata. */
  export interface S3rverFilesystemStore {
    getResourcePath(bucket: string, key: string, resource: string): string;
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
    putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
    getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
    deleteObject(bucket: string, key: string): Promise<void>;
    copyObject(fromBucket: string, fromKey: string, bucket: string, key: string, metadata?: unknown): Promise<unknown>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    store: S3rverFilesystemStore;
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
