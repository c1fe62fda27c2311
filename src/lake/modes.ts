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

/** Creates `dir`, a folder under `<out>/lake`, with every folder from `<out>/lake` down to it 0700. */
export async function ensureLakeDir(outDir: string, dir: string): Promise<void> {
  const root = lakeRoot(outDir);
  const rel = relative(resolve(root), resolve(dir));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new Error(`${dir} is not under the lake ${root}`);
  await ensureDir(outDir);
  let path = root;
  await ensureDir(path, LAKE_DIR_MODE);
  for (const segment of rel ? rel.split(sep) : []) {
    path = join(path, segment);
    await ensureDir(path, LAKE_DIR_MODE);
  }
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
