/** The working copy's files: a walk (ignored paths left out), their change since the last sync, modes. */
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isIgnored, isPrivate } from './layout.js';
import { sha256File, type LocalIndex } from './indexes.js';

export interface FileStat {
  size: number;
  mtimeMs: number;
}

/** Every file of the copy that belongs to the output, by `/`-separated path. */
export async function walkCopy(copy: string): Promise<Map<string, FileStat>> {
  const out = new Map<string, FileStat>();
  const visit = async (rel: string): Promise<void> => {
    const entries = await readdir(join(copy, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (isIgnored(path)) continue;
      if (e.isDirectory()) await visit(path);
      else if (e.isFile()) {
        const s = await stat(join(copy, path)).catch(() => undefined);
        if (s) out.set(path, { size: s.size, mtimeMs: s.mtimeMs });
      }
    }
  };
  await visit('');
  return out;
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
  return { changed: changed.sort((a, b) => order(a.path) - order(b.path) || (a.path < b.path ? -1 : 1)), removed };
}

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
