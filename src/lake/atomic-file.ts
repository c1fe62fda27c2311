/**
 * Durable, atomic file replacement: write a temporary file in the same directory, fsync it,
 * rename it over the target, fsync the directory. A reader (or a run killed at any instant)
 * sees the old content or the new, never a half-written file.
 */
import { chmod, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writingOutput } from './errors.js';
import { tempPathFor } from './paths.js';

/** Flushes a file's (or a directory's entries') data to the disk. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Creates `dir` (and parents) and gives it exactly `mode` when one is asked for,
 * tightening a looser existing mode. Fails clearly when the path is a file.
 * Resolves true when `dir` itself did not exist before (so it holds nothing yet).
 */
export async function ensureDir(dir: string, mode?: number): Promise<boolean> {
  return writingOutput('into the directory', dir, async () => {
    const made = await mkdir(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) }).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err; // a file in the way: reported as "not a directory" below
        return undefined;
      },
    );
    const info = await stat(dir);
    if (!info.isDirectory()) throw Object.assign(new Error(`${dir}: Not a directory`), { code: 'ENOTDIR' });
    if (mode !== undefined && (info.mode & 0o777) !== mode) await chmod(dir, mode);
    return made !== undefined;
  });
}

/** Moves a finished temporary file over `target` and makes the rename durable. */
export async function renameDurably(tempPath: string, target: string): Promise<void> {
  await rename(tempPath, target);
  await fsyncPath(dirname(target));
}

export interface AtomicWriteOptions {
  /** File mode of the result (default 0o600); the parent directory gets `dirMode` if given. */
  mode?: number;
  dirMode?: number;
}

export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  await ensureDir(dirname(path), options.dirMode);
  const temp = tempPathFor(path);
  await writingOutput('a file', path, async () => {
    try {
      const handle = await open(temp, 'wx', mode);
      try {
        await handle.writeFile(data);
        await handle.chmod(mode); // exact, whatever the umask
        await handle.sync();
      } finally {
        await handle.close();
      }
      await renameDurably(temp, path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  });
}

/** Pretty JSON with a trailing newline, written atomically. Used by state and run manifests. */
export async function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}
