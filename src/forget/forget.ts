/**
 * Forgets users: every personal value the output directory holds for them (lake files, superseded
 * snapshots and old windows included, and quarantined raw records) is cleared, file by file, atomically.
 * The warehouse and marts hold no names or emails (staging keeps only a per-build salted hash), so the
 * next build is clean too. Temporary files of killed runs (raw pages in spills) are removed first.
 */
import { resolve } from 'node:path';
import { acquireLock, cleanTemporaryFiles } from '../lake/index.js';
import { anonymisedUsers, identitiesOf } from './identities.js';
import { scrubLake, type StreamScrub } from './scrub-lake.js';
import { scrubQuarantine } from './scrub-quarantine.js';

export interface ForgetResult {
  users: number[];
  /** Email addresses found for them (what orders are recognised by). */
  emails: number;
  /** Lake files rewritten and rows cleared, per stream. */
  streams: Record<string, StreamScrub>;
  files: number;
  rows: number;
  quarantineLines: number;
}

export interface ForgetOptions {
  /** Take the output directory's lock (a caller that holds it passes false). */
  lock?: boolean;
}

export async function forgetUsers(outDir: string, ids: number[], options: ForgetOptions = {}): Promise<ForgetResult> {
  return underLock(resolve(outDir), options, async (dir) => {
    if (!ids.length) return { users: [], emails: 0, streams: {}, files: 0, rows: 0, quarantineLines: 0 };
    const who = await identitiesOf(dir, ids);
    const streams = await scrubLake(dir, who);
    const quarantineLines = await scrubQuarantine(dir, who);
    const all = Object.values(streams);
    return { users: ids, emails: who.emails.length, streams, files: all.reduce((n, s) => n + s.files, 0), rows: all.reduce((n, s) => n + s.rows, 0), quarantineLines };
  });
}

/** Forgets every user the latest users snapshot shows anonymised upstream whose data older files still hold. */
export async function forgetAnonymised(outDir: string, options: ForgetOptions = {}): Promise<ForgetResult> {
  return underLock(resolve(outDir), options, async (dir) => forgetUsers(dir, await anonymisedUsers(dir), { lock: false }));
}

/** One writer at a time; a killed run's temporary files (raw pages) go before anything is read. */
async function underLock<T>(dir: string, options: ForgetOptions, work: (dir: string) => Promise<T>): Promise<T> {
  if (options.lock === false) return work(dir);
  const lock = await acquireLock(dir);
  try {
    await cleanTemporaryFiles(dir);
    return await work(dir);
  } finally {
    await lock.release();
  }
}
