/**
 * One run per output directory: `<out>/.perks.lock` holds the owner's pid, host, start time and a
 * heartbeat. It is created whole or not at all (written to a temporary file, then link(2), which
 * fails if the lock exists). A second run stops at once with LockedError (exit code 5). A lock
 * whose process is certainly dead (same host, boot and PID namespace, pid gone: certainlyDead in
 * src/shared/process-identity.ts) or whose heartbeat is older than `staleAfterMs` is taken over, under
 * a short-lived guard file so two newcomers cannot both take it. A lock written without boot id and PID
 * namespace (an older version) is only taken over once its heartbeat is stale.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, open, readFile, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir, writeFileAtomic } from './atomic-file.js';
import { LockedError, writingOutput } from './errors.js';
import { tempPathFor } from '../shared/durable-file.js';
import { crashPoint } from '../shared/crash-points.js';
import { certainlyDead, processIdentity } from '../shared/process-identity.js';

export { pidAlive } from '../shared/process-identity.js';

export interface LockHolder {
  pid: number;
  host: string;
  /** The kernel's boot id and the PID namespace of the holder (absent in locks of older versions). */
  boot_id?: string;
  pid_ns?: string;
  /** The perks command that holds it (its name only: arguments may hold secrets); absent in older locks. */
  command?: string;
  started_at: string;
  heartbeat_at: string;
  token: string;
}

export interface Lock {
  readonly path: string;
  release(): Promise<void>;
}

export interface LockOptions {
  /** A lock not refreshed for this long is stale even if its pid seems alive (default 10 minutes). */
  staleAfterMs?: number;
  /** How often the holder refreshes its heartbeat (default 30 s). */
  heartbeatMs?: number;
  /** The run's lock passes the `before-unlock` crash point; another lock (the lake journal's) does not. */
  crashPoints?: boolean;
}

export const lockPath = (outDir: string) => join(outDir, '.perks.lock');
/** A takeover guard older than this belongs to a process that died mid-takeover. */
const GUARD_STALE_MS = 30_000;
/** A lock whose heartbeat is older belongs to a run that died elsewhere (the lake's and the extract's work locks). */
export const STALE_LOCK_MS = 10 * 60_000;

export async function acquireLock(outDir: string, options: LockOptions = {}): Promise<Lock> {
  const staleAfterMs = options.staleAfterMs ?? STALE_LOCK_MS;
  const path = lockPath(outDir);
  await ensureDir(outDir);
  const now = new Date().toISOString();
  const { host, boot_id, pid_ns } = processIdentity();
  const me: LockHolder = {
    pid: process.pid,
    host,
    boot_id,
    pid_ns,
    command: process.argv[2],
    started_at: now,
    heartbeat_at: now,
    token: randomBytes(8).toString('hex'),
  };
  for (let attempt = 1; !(await createExclusive(path, me)); attempt += 1) {
    const holder = await readHolder(path);
    const gone = holder === undefined && !(await stat(path).catch(() => undefined));
    if (gone && attempt < 3) continue; // released between our two looks: try again
    if (await isStale(path, holder, staleAfterMs)) {
      if (await takeOver(path, holder, me, staleAfterMs)) break;
    }
    throw lockedError(outDir, path, holder);
  }
  return holdLock(path, me, options.heartbeatMs ?? 30_000, options.crashPoints ?? true);
}

function holdLock(path: string, me: LockHolder, heartbeatMs: number, crashPoints: boolean): Lock {
  const ours = () => readHolderSync(path)?.token === me.token;
  const onExit = () => {
    if (ours()) unlinkSync(path);
  };
  const timer = setInterval(() => {
    if (!ours()) return;
    void writeFileAtomic(path, JSON.stringify({ ...me, heartbeat_at: new Date().toISOString() }), {
      mode: 0o644,
    }).catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  process.once('exit', onExit);
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      if (crashPoints) crashPoint('before-unlock');
      released = true;
      clearInterval(timer);
      process.removeListener('exit', onExit);
      if ((await readHolder(path))?.token === me.token) await unlink(path).catch(() => undefined);
    },
  };
}

/** Creates `path` holding `holder`, whole, unless it exists: false when it does. */
async function createExclusive(path: string, holder: LockHolder): Promise<boolean> {
  const temp = tempPathFor(path);
  return writingOutput('the lock file', path, async () => {
    try {
      const handle = await open(temp, 'wx', 0o644);
      await handle.writeFile(JSON.stringify(holder));
      await handle.sync();
      await handle.close();
      await link(temp, path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      await rm(temp, { force: true });
    }
  });
}

async function isStale(path: string, holder: LockHolder | undefined, staleAfterMs: number): Promise<boolean> {
  if (holder) return staleReason(holder, staleAfterMs) !== null;
  const age = Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? NaN);
  return !Number.isNaN(age) && age > staleAfterMs;
}

/**
 * Why a holder's lock is stale (the next run takes it over), or null while it looks alive: its process is gone on
 * this machine, or its heartbeat is older than `staleAfterMs`. The one rule, for the lock and `perks status`.
 */
export function staleReason(holder: LockHolder, staleAfterMs = STALE_LOCK_MS): string | null {
  if (certainlyDead(holder)) return `its process ${holder.pid} is gone`;
  const age = heartbeatAgeMs(holder);
  return !Number.isNaN(age) && age > staleAfterMs
    ? `no heartbeat for more than ${staleAfterMs / 60_000} minutes`
    : null;
}

/**
 * How long ago the holder's heartbeat was, by the system's clock (NaN when unreadable): heartbeats are written in
 * wall time by every process alike (a PERKS_NOW clock starts anew in each process), so their age is measured in
 * wall time too, by the lock and by `perks status` alike.
 */
export function heartbeatAgeMs(holder: LockHolder): number {
  return Date.now() - Date.parse(holder.heartbeat_at);
}

/** Replaces a stale lock, if it is still the same stale lock once the guard is held. */
async function takeOver(
  path: string,
  stale: LockHolder | undefined,
  me: LockHolder,
  staleAfterMs: number,
): Promise<boolean> {
  const guard = `${path}.takeover`;
  const guardAge = Date.now() - ((await stat(guard).catch(() => undefined))?.mtimeMs ?? Date.now());
  if (guardAge > GUARD_STALE_MS) await rm(guard, { force: true });
  if (!(await createExclusive(guard, me))) return false;
  try {
    const current = await readHolder(path);
    if (current?.token !== stale?.token || !(await isStale(path, current, staleAfterMs))) return false;
    await rm(path, { force: true });
    return await createExclusive(path, me);
  } finally {
    await rm(guard, { force: true });
  }
}

function lockedError(outDir: string, path: string, holder: LockHolder | undefined): LockedError {
  const who = holder
    ? `pid ${holder.pid} on ${holder.host}, started ${holder.started_at}, last heartbeat ${holder.heartbeat_at}`
    : 'an unreadable lock file';
  return new LockedError(
    `output directory ${outDir} is in use by another run (${who}); wait for it to finish, or delete ${path} if that run is gone`,
  );
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as LockHolder;
    return typeof v.pid === 'number' && typeof v.token === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Who holds the output directory's lock now (undefined: nobody, or an unreadable lock file). */
export const readLockHolder = (outDir: string) => readHolder(lockPath(outDir));

async function readHolder(path: string): Promise<LockHolder | undefined> {
  return parseHolder(await readFile(path, 'utf8').catch(() => ''));
}

function readHolderSync(path: string): LockHolder | undefined {
  try {
    return parseHolder(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}
