/**
 * The one atomic, durable write of the output: a temporary file beside the target (a name startup hygiene
 * knows: src/lake/temp-files.ts), its data fsynced, renamed over the target, the folder fsynced. A reader (or a
 * run killed at any instant) sees the old content or the new, never a half-written file, and after a crash the
 * rename is on disk. In the base layer so that every writer (lake, store, report, lineage, …) uses this one.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Temporary files are hidden (a leading "."), never end in ".parquet" (so `**\/*.parquet` globs
 * skip them) and carry a tag of the process that made them (pid and a random part, since pids
 * are reused), so startup hygiene can tell another run's leftovers from this run's own files.
 */
const TEMP = /^\..*\.perks-tmp-(\d+-[0-9a-f]{8})-[0-9a-f]{8}$/;
export const PROCESS_TAG = `${process.pid}-${randomBytes(4).toString('hex')}`;

/** A fresh temporary name in `finalPath`'s folder (a rename across folders is not atomic). */
export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.perks-tmp-${PROCESS_TAG}-${randomBytes(4).toString('hex')}`);
}

/** The tag of the process that made a temporary file, or undefined if `name` is not one of ours. */
export function tempFileOwner(name: string): string | undefined {
  return TEMP.exec(name)?.[1];
}

/** Flushes a file's (or a folder's entries') data to the disk. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * fsyncPath for synchronous callers (the write-back's journal). A folder some platforms refuse to fsync is
 * left as it is when `folder` says so (its files are fsynced themselves).
 */
export function fsyncPathSync(path: string, { folder = false } = {}): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (err) {
    if (!folder) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Moves a finished, fsynced temporary file over `target` and makes the rename durable. */
export async function renameDurably(temp: string, target: string): Promise<void> {
  await rename(temp, target);
  await fsyncPath(dirname(target));
}

/** renameDurably for synchronous callers. */
export function renameDurablySync(temp: string, target: string): void {
  renameSync(temp, target);
  fsyncPathSync(dirname(target), { folder: true });
}

/**
 * Switches in a temporary file something else wrote (DuckDB's COPY, Chromium, a download): its data fsynced,
 * renamed over `target`, the folder fsynced. The temporary file is removed when any step fails.
 */
export async function commitDurably(temp: string, target: string): Promise<void> {
  try {
    await fsyncPath(temp);
    await renameDurably(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * Writes `data` to `target` atomically and durably: a temporary file opened exclusively, written, fsynced,
 * renamed, the folder fsynced. The folder must exist. With a `mode` the file gets exactly it, whatever the
 * umask; without, the umask's (as `writeFile` gives).
 */
export async function writeDurably(target: string, data: string | Uint8Array, mode?: number): Promise<void> {
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameDurably(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
