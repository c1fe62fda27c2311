/**
 * The lake's folders (made with their modes) and its atomic JSON and file writes: the one durable write
 * (src/shared/durable-file.ts) with the output's error wording.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writingOutput } from './errors.js';
import { writeDurably } from '../shared/durable-file.js';

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
  await writingOutput('a file', path, () => writeDurably(path, data, mode));
}

/** Pretty JSON with a trailing newline, written atomically. Used by state and run manifests. */
export async function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}
