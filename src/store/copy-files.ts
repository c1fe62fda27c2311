/** The working copy's files: a walk (ignored paths left out), their change since the last sync, modes. */
import { chmod, link, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isIgnored, isPrivate } from './layout.js';
import { sha256File, type LocalIndex } from './indexes.js';

export interface FileStat {
  size: number;
  mtimeMs: number;
}

/**
 * Every file of the copy that belongs to the output, by `/`-separated path; `state/` first (a state names
 * only data committed before it was written: stageChanges relies on it). `onFile` sees each file as the walk
 * reaches it.
 */
export async function walkCopy(
  copy: string,
  onFile?: (path: string, stat: FileStat) => Promise<void>,
): Promise<Map<string, FileStat>> {
  const out = new Map<string, FileStat>();
  const visit = async (rel: string): Promise<void> => {
    // A folder or file gone since its parent was read is skipped; any other failure stops the walk: a folder
    // taken for empty would have its files removed from the store.
    const entries = await readdir(join(copy, rel), { withFileTypes: true }).catch(unlessGone([]));
    if (!rel) entries.sort((a, b) => Number(b.name === 'state') - Number(a.name === 'state'));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (isIgnored(path)) continue;
      if (e.isDirectory()) await visit(path);
      else if (e.isFile()) {
        const s = await stat(join(copy, path)).catch(unlessGone(undefined));
        if (!s) continue;
        out.set(path, { size: s.size, mtimeMs: s.mtimeMs });
        await onFile?.(path, { size: s.size, mtimeMs: s.mtimeMs });
      }
    }
  };
  await visit('');
  return out;
}

function unlessGone<T>(value: T): (err: unknown) => T {
  return (err) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return value;
    throw err;
  };
}

/**
 * The mtime to remember for a file, or -1 when it is too recent to trust. A file system stamps mtimes at a
 * coarse tick (a few ms on Linux), so a file rewritten with the same size within the tick of its last sync
 * would look unchanged; as git does with a racily clean index, such an entry is hashed next time instead.
 */
export function settledMtime(mtimeMs: number): number {
  return Date.now() - mtimeMs > RACY_MS ? mtimeMs : -1;
}
const RACY_MS = 2_000;

export interface Change {
  path: string;
  size: number;
  mtimeMs: number;
  sha256: string;
  /** Where its bytes are read for the upload (a staged copy: stageChanges), when not the path itself. */
  source?: string;
}

/**
 * What differs from the last sync: files new or changed (same size and mtime counts as unchanged;
 * otherwise the content's hash decides), and files the index knows that are gone.
 */
export async function localChanges(
  copy: string,
  index: LocalIndex,
  files?: Map<string, FileStat>,
): Promise<{ changed: Change[]; removed: string[] }> {
  const now = files ?? (await walkCopy(copy));
  const changed: Change[] = [];
  for (const [path, s] of now) {
    const known = index.files[path];
    if (known && known.size === s.size && known.mtimeMs === s.mtimeMs) continue;
    const sha256 = await sha256File(join(copy, path));
    if (known && known.sha256 === sha256) {
      known.mtimeMs = settledMtime(s.mtimeMs); // touched, not changed
      continue;
    }
    changed.push({ path, size: s.size, mtimeMs: s.mtimeMs, sha256 });
  }
  const removed = Object.keys(index.files).filter((p) => !now.has(p));
  return { changed: changed.sort(byUploadOrder), removed };
}

/**
 * What differs from the last sync, staged so that the upload reads the bytes of this moment: each file that
 * may have changed is hard-linked into `stage` the moment the walk reaches it (a file replaced later by a
 * rename keeps the staged bytes), an append-only `.jsonl` copied up to its last whole line. With commits
 * going on beside it (an extract's checkpoint), the caller holds them back while this runs (the commit gate,
 * the lake's journal turn); `state/` first is the fallback for a write outside them. The caller removes
 * `stage` after the upload.
 */
export async function stageChanges(
  copy: string,
  index: LocalIndex,
  stage: string,
): Promise<{ changed: Change[]; removed: string[] }> {
  await rm(stage, { recursive: true, force: true });
  await mkdir(stage, { recursive: true, mode: 0o700 });
  const staged = new Map<string, string>();
  const now = await walkCopy(copy, async (path, s) => {
    const known = index.files[path];
    if (known && known.size === s.size && known.mtimeMs === s.mtimeMs) return;
    const to = join(stage, String(staged.size));
    if (path.endsWith('.jsonl')) await copyWholeLines(join(copy, path), to);
    else
      try {
        await link(join(copy, path), to);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // replaced or removed since the walk read it
        throw err;
      }
    staged.set(path, to);
  });
  const changed: Change[] = [];
  for (const [path, source] of staged) {
    const s = await stat(source);
    const sha256 = await sha256File(source);
    const known = index.files[path];
    if (known && known.sha256 === sha256) {
      if (s.size === now.get(path)?.size) known.mtimeMs = settledMtime(s.mtimeMs); // touched, not changed
      continue;
    }
    // a cut copy's size differs from the file's: it is hashed again next time
    changed.push({ path, size: s.size, mtimeMs: s.mtimeMs, sha256, source });
  }
  const removed = Object.keys(index.files).filter((p) => !now.has(p));
  return { changed: changed.sort(byUploadOrder), removed };
}

/** An append-only log as far as its last whole line (a line being appended is left for the next publish). */
async function copyWholeLines(from: string, to: string): Promise<void> {
  const bytes = await readFile(from);
  const end = bytes.lastIndexOf(0x0a) + 1;
  await writeFile(to, bytes.subarray(0, end), { mode: 0o600 });
}

const byUploadOrder = (a: Change, b: Change) => order(a.path) - order(b.path) || (a.path < b.path ? -1 : 1);

/** Upload order: lake data first, then other committed files, pointers (state, journals) and views last. */
function order(path: string): number {
  if (path.startsWith('lake/') && path.endsWith('.parquet')) return 0;
  if (path.startsWith('state/') || path === 'lake/_compaction.json') return 2;
  return 1;
}

/** Makes the folders of `path` in the copy, 0700 where the output keeps them private. */
export async function ensureParent(copy: string, path: string): Promise<void> {
  const dir = dirname(join(copy, path));
  await mkdir(dir, { recursive: true, mode: isPrivate(path) ? 0o700 : 0o755 });
  if (isPrivate(path)) await chmod(dir, 0o700).catch(() => undefined);
}

export const fileMode = (path: string) => (isPrivate(path) ? 0o600 : 0o644);

export async function removeFile(copy: string, path: string): Promise<void> {
  await rm(join(copy, path), { force: true });
}
