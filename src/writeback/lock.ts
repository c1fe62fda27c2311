/**
 * One write-back at a time per output directory: two at once could both post a row. The lock is a file
 * created exclusively, holding the owner's pid; a lock whose process is gone (kill -9) is taken over.
 * It is separate from the output lock of `perks run`, which calls the write-back while holding that one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pidAlive } from '../lake/index.js';
import { WritebackLockedError } from './errors.js';

export interface Lock {
  release(): void;
}

export function acquireWritebackLock(dir: string): Lock {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'writeback.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }), {
        flag: 'wx',
        mode: 0o600,
      });
      return { release: () => fs.rmSync(file, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = ownerOf(file);
      if (pid !== undefined && alive(pid)) throw new WritebackLockedError(file, pid);
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new WritebackLockedError(file, ownerOf(file) ?? -1);
}

function ownerOf(file: string): number | undefined {
  try {
    const pid = Number((JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: unknown }).pid);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  return pid === process.pid || pidAlive(pid);
}
