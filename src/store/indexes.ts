/**
 * The two indexes.
 *
 * The store's index, `_perks/index.json`, is its one commit point: every committed file of the output by
 * path, with the object key holding it, its size, ETag and SHA-256, and the publish's generation. What
 * it does not name is not part of the store, whatever objects exist: a publish uploads its files first
 * and writes the index last, so a publish killed before that leaves nothing any reader or run counts.
 * `garbage` lists the objects the last publish replaced, removed once the index is written; it stays listed
 * until the next commit (the intent, removed last, says whether that removal may be unfinished).
 *
 * The working copy's index, `<copy>/.perks-store/index.json`: what each local file was when last synced
 * (key, ETag, size, mtime, SHA-256), so only changed files move either way.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeDurably } from '../shared/durable-file.js';
import { ExitCode } from '../shared/exit-codes.js';
import { StoreError } from './errors.js';
import { LOCAL_DIR } from './layout.js';

/** The layout this program writes and reads. A store written by a newer one is refused, never rewritten. */
export const STORE_FORMAT = 1;

const RemoteEntry = z.object({ key: z.string(), size: z.number(), etag: z.string(), sha256: z.string() });
export type RemoteEntry = z.infer<typeof RemoteEntry>;

export const RemoteIndex = z.object({
  format: z.number().int(),
  generation: z.number().int().min(0),
  published_at: z.string(),
  by: z.object({ host: z.string(), pid: z.number(), command: z.string() }),
  files: z.record(z.string(), RemoteEntry),
  garbage: z.array(z.string()),
  /** The lease token of the writer that wrote it last (session.ts: fence). */
  lease: z.string().optional(),
});
export type RemoteIndex = z.infer<typeof RemoteIndex>;

export const Intent = z.object({ generation: z.number().int(), keys: z.array(z.string()), started_at: z.string() });
export type Intent = z.infer<typeof Intent>;

export function emptyIndex(): RemoteIndex {
  return {
    format: STORE_FORMAT,
    generation: 0,
    published_at: '',
    by: { host: '', pid: 0, command: '' },
    files: {},
    garbage: [],
  };
}

/** Parses the store's index: a newer format is refused (exit 2), a broken one named. */
export function parseRemoteIndex(text: string, where: string): RemoteIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new StoreError(
      `the store index of ${where} (_perks/index.json) is not JSON: restore it, or use another prefix`,
      ExitCode.failed,
    );
  }
  const format = (raw as { format?: unknown })?.format;
  if (typeof format === 'number' && format > STORE_FORMAT)
    throw new StoreError(
      `the store ${where} was written by a newer perks (store format ${format}; this one reads ${STORE_FORMAT}): upgrade perks; nothing was changed`,
      ExitCode.config,
    );
  const parsed = RemoteIndex.safeParse(raw);
  if (!parsed.success)
    throw new StoreError(
      `the store index of ${where} (_perks/index.json) is not one perks wrote` +
        ` (${parsed.error.issues[0]?.path.join('.') || 'root'}): restore it, or use another prefix`,
      ExitCode.failed,
    );
  return parsed.data;
}

const LocalEntry = z.object({
  key: z.string(),
  etag: z.string(),
  size: z.number(),
  mtimeMs: z.number(),
  sha256: z.string(),
});
export type LocalEntry = z.infer<typeof LocalEntry>;

const LocalIndex = z.object({
  store: z.string(),
  generation: z.number().int(),
  files: z.record(z.string(), LocalEntry),
  /**
   * What the service does with conditional writes, probed once per working copy (probe.ts). A copy of an
   * earlier release kept only `conditionalWrites: boolean` (If-None-Match): dropped here, so it probes again.
   */
  probe: z
    .object({
      ifNoneMatch: z.boolean(),
      ifMatch: z.enum(['quoted', 'unquoted', 'ignored', 'refused']),
    })
    .optional(),
});
export type LocalIndex = z.infer<typeof LocalIndex>;

export const localIndexPath = (copy: string) => join(copy, LOCAL_DIR, 'index.json');

/** The working copy's index; undefined for a folder that is none (new, or damaged: it is then synced anew). */
export async function readLocalIndex(copy: string): Promise<LocalIndex | undefined> {
  try {
    const parsed = LocalIndex.safeParse(JSON.parse(await readFile(localIndexPath(copy), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function writeLocalIndex(copy: string, index: LocalIndex): Promise<void> {
  const file = localIndexPath(copy);
  await mkdir(join(copy, LOCAL_DIR), { recursive: true, mode: 0o700 });
  await writeDurably(file, JSON.stringify(index), 0o600);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
