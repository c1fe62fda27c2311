/**
 * What the S3 service behind a store really does with conditional writes, found out on a scratch object under
 * `_perks/` before any work (once per working copy: the local index keeps the answer), and by
 * `perks store check`, which also tries CopyObject and listing.
 *
 * S3 dialects differ where the lease and the commit depend on them: AWS S3 (since 2024), MinIO and R2 refuse a
 * second `If-None-Match: *` create and a stale `If-Match`, and take the ETag in `If-Match` as they return it,
 * in quotes; Ceph RGW 16 (and DigitalOcean Spaces, by reports) answers 412 to the quoted ETag and takes it
 * unquoted; s3rver and some gateways ignore both headers. The probe learns which form `If-Match` takes
 * (quoted first, as RFC 9110 writes it), and whether each header is enforced.
 */
import { randomBytes } from 'node:crypto';
import type { StoreClient } from './client.js';
import { PreconditionFailed } from './errors.js';
import type { IfMatchForm } from './etag.js';
import { META } from './layout.js';

export interface ConditionalWrites {
  /** A second `If-None-Match: *` create of one object is refused (412). */
  ifNoneMatch: boolean;
  /**
   * `If-Match`: the form in which the current ETag is taken (and a stale one refused); `ignored` when a stale
   * ETag is taken too; `refused` when the current one is refused in both forms.
   */
  ifMatch: IfMatchForm | 'ignored' | 'refused';
}

/** Whether the lease can live in the store itself (no Redis): both headers enforced. */
export const enforced = (c: ConditionalWrites) => c.ifNoneMatch && (c.ifMatch === 'quoted' || c.ifMatch === 'unquoted');

/** What the service does not do, in words, for a message ('' when it does all). */
export function lacking(c: ConditionalWrites): string {
  const gaps: string[] = [];
  if (!c.ifNoneMatch) gaps.push('it accepted a second create of one object with If-None-Match: * (S3 answers 412)');
  if (c.ifMatch === 'ignored') gaps.push('it accepted a write with If-Match on a stale ETag (S3 answers 412)');
  if (c.ifMatch === 'refused') gaps.push('it refused If-Match on the current ETag, quoted and unquoted (S3 takes it)');
  return gaps.join('; ');
}

/** A conditional write that may be refused: true when it was taken, false on 412. */
async function taken(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (err instanceof PreconditionFailed) return false;
    throw err;
  }
}

/** The form of `If-Match` the service takes for `etag` (the current one) on `key`, trying quoted first. */
async function ifMatchForm(client: StoreClient, key: string, etag: string): Promise<IfMatchForm | undefined> {
  for (const form of ['quoted', 'unquoted'] as const) {
    if (await taken(() => client.put(key, Buffer.from(`probe ${form}`), { ifMatch: etag, form }))) return form;
  }
  return undefined;
}

/**
 * Probes the service on a scratch object `_perks/probe-<random>` (removed after): two creates with
 * `If-None-Match: *`, then `If-Match` with the current ETag (quoted, else unquoted), then with a stale one.
 * Five or six small requests.
 */
export async function probeConditionalWrites(client: StoreClient): Promise<ConditionalWrites> {
  const key = `${META}/probe-${randomBytes(6).toString('hex')}`;
  try {
    const first = await client.put(key, Buffer.from('probe'), { ifNoneMatch: '*' });
    const second = await taken(() => client.put(key, Buffer.from('probe again'), { ifNoneMatch: '*' }));
    const current = second ? ((await client.head(key))?.etag ?? first.etag) : first.etag;
    const form = await ifMatchForm(client, key, current);
    if (!form) return { ifNoneMatch: !second, ifMatch: 'refused' };
    // the version written before the last one: a stale ETag, which an enforcing service refuses
    const stale = await taken(() => client.put(key, Buffer.from('probe stale'), { ifMatch: current, form }));
    return { ifNoneMatch: !second, ifMatch: stale ? 'ignored' : form };
  } finally {
    await client.delete(key);
  }
}
