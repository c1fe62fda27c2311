/**
 * s3rver writes an object in place: it truncates the file, then streams the request's body into it, and
 * reads an object's length from the file. So a GET racing a PUT of the same key reads the object empty or cut
 * short (a test reading the store's index while a run published it met one: JSON cut short), and a PUT whose
 * client is killed half-way leaves the object cut short for good. AWS S3 and Ceph RGW replace an object whole,
 * or not at all. This makes s3rver's store do the same, so that the tests judge our code, not the server's:
 * - a PUT receives its body whole into a temporary file beside the object (its name does not end like an
 *   object's, so no listing shows it); a body that does not arrive whole is dropped and the object is as it was;
 * - the file is then renamed over the object and its metadata written, in the key's turn;
 * - a GET (and HEAD) reads the metadata and opens the file in the key's turn: the open file is the object of
 *   that moment, whatever is renamed over it afterwards; DELETE and a copy's write take the key's turn too.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3rverFilesystemStore, S3rverObject } from 's3rver';

let received = 0;

export function replaceObjectsWhole(store: S3rverFilesystemStore): void {
  const turns = new Map<string, Promise<unknown>>();
  /** Runs `work` after every earlier operation on the same object, and before any later one. */
  const inTurn = <T>(bucket: string, key: string, work: () => Promise<T>): Promise<T> => {
    const id = `${bucket}/${key}`;
    const done = (turns.get(id) ?? Promise.resolve()).then(work);
    const settled = done.catch(() => undefined); // the next turn waits for this one, whatever its outcome
    turns.set(id, settled);
    void settled.then(() => turns.get(id) === settled && turns.delete(id));
    return done;
  };

  const getObject = store.getObject.bind(store);
  const deleteObject = store.deleteObject.bind(store);
  const copyObject = store.copyObject.bind(store);

  store.putObject = async (object: S3rverObject) => {
    const path = store.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.receiving-${process.pid}-${++received}`;
    const md5 = createHash('md5');
    let size = 0;
    try {
      if (Buffer.isBuffer(object.content)) {
        md5.update(object.content);
        size = object.content.length;
        await writeFile(temporary, object.content);
      } else {
        const count = new Transform({
          transform(chunk: Buffer, _encoding, next) {
            md5.update(chunk);
            size += chunk.length;
            next(null, chunk);
          },
        });
        await pipeline(object.content, count, createWriteStream(temporary));
      }
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const digest = md5.digest('hex');
    await inTurn(object.bucket, object.key, async () => {
      await rename(temporary, path);
      await store.putMetadata(object.bucket, object.key, object.metadata, digest);
    });
    return { size, md5: digest };
  };
  store.getObject = (bucket, key, options) => inTurn(bucket, key, () => getObject(bucket, key, options));
  store.deleteObject = (bucket, key) => inTurn(bucket, key, () => deleteObject(bucket, key));
  store.copyObject = (fromBucket, fromKey, bucket, key, metadata) =>
    inTurn(bucket, key, () => copyObject(fromBucket, fromKey, bucket, key, metadata));
}
