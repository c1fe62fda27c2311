/**
 * The lake holds personal data (orders and users carry names and emails), like the state and the
 * quarantine: under `<out>/lake` every folder is 0700 and every file 0600, exactly, whatever the umask.
 * DuckDB creates the files it writes with 0666 minus the umask, so writers chmod them before the rename
 * that publishes them; inside 0700 folders no other user sees them in between.
 */
import { chmod, lstat, readdir } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ensureDir } from './atomic-file.js';
import { lakeRoot } from './paths.js';

export const LAKE_DIR_MODE = 0o700;
export const LAKE_FILE_MODE = 0o600;

/**
 * Creates `dir`, a folder under `<out>/lake`, with every folder from `<out>/lake` down to it 0700.
 * `known` (one per run) remembers the folders already made, so a run landing thousands of day
 * partitions makes each parent once. Resolves true when `dir` itself is new (it holds no file yet).
 */
export async function ensureLakeDir(outDir: string, dir: string, known?: Set<string>): Promise<boolean> {
  const root = lakeRoot(outDir);
  const rel = relative(resolve(root), resolve(dir));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(`${dir} is not under the lake ${root}`);
  const ensure = async (path: string, mode?: number) => {
    if (known?.has(path)) return false;
    const made = await ensureDir(path, mode);
    known?.add(path);
    return made;
  };
  await ensure(outDir);
  let path = root;
  let made = await ensure(path, LAKE_DIR_MODE);
  for (const segment of rel ? rel.split(sep) : []) {
    path = join(path, segment);
    made = await ensure(path, LAKE_DIR_MODE);
  }
  return made;
}

/** Once per run: folders 0700 and files 0600 under `<out>/lake`, whatever an older version or a copy left. */
export function tightenLake(outDir: string): Promise<void> {
  return tightenTree(lakeRoot(outDir), { dir: LAKE_DIR_MODE, file: LAKE_FILE_MODE });
}

/**
 * Removes the permission bits beyond `modes` from `root` and everything under it. Symbolic links are
 * not followed; entries that go while it walks (another worker's temporary files) are skipped.
 */
export async function tightenTree(root: string, modes: { dir: number; file: number }): Promise<void> {
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path).catch(() => undefined);
    if (!info || !(info.isDirectory() || info.isFile())) return;
    const mode = info.isDirectory() ? modes.dir : modes.file;
    if ((info.mode & 0o777 & ~mode) !== 0) await chmod(path, mode).catch(ignoreGone);
    if (!info.isDirectory()) return;
    await Promise.all((await readdir(path).catch(() => [] as string[])).map((name) => walk(join(path, name))));
  };
  await walk(root);
}

function ignoreGone(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}
