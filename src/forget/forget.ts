/**
 * Forgets users: every personal value the output directory holds for them (lake files, superseded
 * snapshots and old windows included, and quarantined raw records) is cleared, file by file, atomically.
 * The warehouse and marts hold no names or emails (staging carries none), so the next build is clean too.
 * Temporary files of killed runs (raw pages in spills) are removed first.
 *
 * Who is owed an erasure is read from two places: the lake (latest snapshot anonymised, older rows
 * not), and the erasure queue (src/lake/erasure-queue.ts), which the extract fills before a users
 * snapshot that shows an anonymisation replaces the one that held the data. An owed erasure is taken
 * off the queue only after every file is cleared.
 */
import { acquireLock, cleanTemporaryFiles, owedErasures, settleErasures, type OwedErasure } from '../lake/index.js';
import { anonymisedUsers, identitiesOf } from './identities.js';
import { scrubLake, type StreamScrub } from './scrub-lake.js';
import { scrubQuarantine } from './scrub-quarantine.js';
import type { Output } from '../output/index.js';

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
  /**
   * A worker that holds only these groups' part of the directory (`--groups`, `--shard`): their lake
   * files are cleared, quarantine is left to a whole run, and owed erasures stay owed until then.
   */
  groups?: number[];
}

/** Forgets the users `ids` in `output` (the command's Output; its folder is absolute). */
export async function forgetUsers(output: Output, ids: number[], options: ForgetOptions = {}): Promise<ForgetResult> {
  return underLock(output.dir, options, async (dir) => {
    const owed = (await owedErasures(dir, options.groups)).filter((o) => ids.includes(o.id));
    return forgetWith(dir, ids, owed, options);
  });
}

/** Forgets every user owed an erasure: anonymised upstream while older files (or the queue) still hold their data. */
export async function forgetAnonymised(output: Output, options: ForgetOptions = {}): Promise<ForgetResult> {
  return underLock(output.dir, options, async (dir) => {
    const owed = await owedErasures(dir, options.groups);
    const ids = [...new Set([...(await anonymisedUsers(dir, options.groups)), ...owed.map((o) => o.id)])].sort(
      (a, b) => a - b,
    );
    return forgetWith(dir, ids, owed, options);
  });
}

async function forgetWith(
  dir: string,
  ids: number[],
  owed: OwedErasure[],
  options: ForgetOptions,
): Promise<ForgetResult> {
  if (!ids.length) return { users: [], emails: 0, streams: {}, files: 0, rows: 0, quarantineLines: 0 };
  const who = await identitiesOf(
    dir,
    ids,
    owed.flatMap((o) => o.keys),
  );
  const streams = await scrubLake(dir, who, options.groups);
  const whole = options.groups === undefined;
  const quarantineLines = whole ? await scrubQuarantine(dir, who) : 0;
  if (whole) await settleErasures(dir, owed);
  const all = Object.values(streams);
  return {
    users: ids,
    emails: who.emails,
    streams,
    files: all.reduce((n, s) => n + s.files, 0),
    rows: all.reduce((n, s) => n + s.rows, 0),
    quarantineLines,
  };
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
