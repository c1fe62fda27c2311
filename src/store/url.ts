/**
 * A store URL: `s3://bucket[/prefix]` as `--output` or PERKS_OUTPUT. Anything else with a scheme is
 * refused here (one line, exit 2) instead of becoming a local folder named `s3:/…`; a plain path stays
 * a local output directory, unchanged.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../shared/exit-codes.js';
import type { StoreSettings } from '../config/index.js';

export interface StoreUrl {
  readonly bucket: string;
  /** Without leading or trailing slash; '' for the bucket's root. */
  readonly prefix: string;
  /** `s3://bucket/prefix` as normalised. */
  readonly url: string;
}

/** `scheme://…`: any such value is a URL, never a folder name. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** S3's rules for bucket names (also those of every S3-compatible service we know). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Prefix segments: the characters S3 documents as safe in keys (no spaces, quotes, `?`, `#`, `%`). */
const SEGMENT = /^[A-Za-z0-9!_.*'()=+-]+$/;

/** True when `value` names a store (has a scheme), so it must parse as one. */
export function isStoreUrl(value: string | undefined): value is string {
  return value !== undefined && SCHEME.test(value.trim());
}

/** Parses a store URL; `source` names the flag or variable in the one-line refusal. */
export function parseStoreUrl(value: string, source = 'PERKS_OUTPUT'): StoreUrl {
  const text = value.trim();
  const bad = (why: string) => new ConfigError(`${source}=${JSON.stringify(value)} is invalid: ${why}`);
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme !== 's3')
    throw bad(
      'expected a folder or s3://bucket/prefix (S3-compatible services too, with AWS_ENDPOINT_URL_S3); no other scheme is supported',
    );
  const rest = text.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw bad(`"${bucket}" is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`);
  const segments = (slash < 0 ? '' : rest.slice(slash + 1)).split('/').filter((s) => s !== '');
  for (const s of segments) {
    if (s === '.' || s === '..') throw bad('expected no "." or ".." in the prefix');
    if (!SEGMENT.test(s))
      throw bad(`prefix part "${s}" has a character S3 keys should not hold (letters, digits and !_.*'()=+- only)`);
  }
  const prefix = segments.join('/');
  if (Buffer.byteLength(prefix) > 512) throw bad('expected a prefix of at most 512 bytes');
  return { bucket, prefix, url: `s3://${bucket}${prefix ? `/${prefix}` : ''}` };
}

/** The object key of `path` (relative to the output, `/`-separated) under the store's prefix. */
export function keyOf(store: StoreUrl, path: string): string {
  return store.prefix ? `${store.prefix}/${path}` : path;
}

/**
 * The local working copy: PERKS_CACHE_DIR, else one folder per store (endpoint, bucket, prefix) under the
 * user's cache directory (XDG_CACHE_HOME, else ~/.cache): `perks/stores/<bucket>/<prefix>-<hash>`.
 */
export function workingCopyDir(
  store: StoreUrl,
  endpoint: string | undefined,
  settings: Pick<StoreSettings, 'cacheDir' | 'xdgCacheHome'>,
): string {
  if (settings.cacheDir) return settings.cacheDir;
  const base = settings.xdgCacheHome || join(homedir(), '.cache');
  const hash = createHash('sha256')
    .update(`${endpoint ?? 'aws'}\n${store.url}`)
    .digest('hex')
    .slice(0, 10);
  const slug = store.prefix.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(-80) || '_root';
  return join(base, 'perks', 'stores', store.bucket, `${slug}-${hash}`);
}
