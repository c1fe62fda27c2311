/**
 * `<out>/lake/_compaction.json`: the generation of the lake's file set and the switch under way, if any.
 * Every step that replaces committed files (a window or snapshot landed again, a day merged into its month,
 * a month compacted, personal values cleared, old snapshots dropped) is a switch: the journal names it (the
 * generation turns odd), the new file is renamed in under a name never used before, the files it replaces
 * go, and the journal is written again (even). A step that only adds a file under a new name needs none:
 * a reader sees the file or not. A reader that wants a consistent view reads the journal before and after
 * its query (docs/analysts.md): the same even generation both times means no switch happened in between.
 *
 * Switches of every process writing the lake (the extract's windows land concurrently; `--groups` slices
 * and shards share one output directory) take turns: in this process through a queue, between processes
 * through `<out>/lake/.journal/.perks.lock` (the output lock's mechanism: a dead holder's lock is taken
 * over). A switch a killed process left half done is finished (or undone) by the next one to take a turn.
 */
import { existsSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeJsonAtomic } from './atomic-file.js';
import { fsyncPath, renameDurably } from '../shared/durable-file.js';
import { LockedError } from './errors.js';
import { acquireLock } from './lock.js';
import { ensureLakeDir } from './modes.js';
import { lakeRoot } from './paths.js';

export interface Switch {
  stream: string;
  /** The new file (relative to the lake), renamed in before the inputs go. */
  target: string;
  /** The files it replaces (relative to the lake). */
  inputs: string[];
  /** Folders to remove once empty (legacy day folders, dropped snapshots). */
  dirs: string[];
}

export interface Journal {
  generation: number;
  switching: Switch | null;
}

export const journalPath = (outDir: string) => join(lakeRoot(outDir), '_compaction.json');
export const relativeToLake = (outDir: string, path: string) => relative(lakeRoot(outDir), path);

/** A journal lock not refreshed for this long belongs to a process that is gone (it refreshes every 10 s). */
const LOCK_STALE_MS = 60_000;

export function readJournal(outDir: string): Journal {
  try {
    const j = JSON.parse(readFileSync(journalPath(outDir), 'utf8')) as Journal;
    if (Number.isInteger(j.generation)) return { generation: j.generation, switching: j.switching ?? null };
  } catch {
    // none yet (or torn: it is only ever replaced whole, so a torn one is not ours): start at 0
  }
  return { generation: 0, switching: null };
}

/** Turns of this process, one lake after another (keyed by the lake folder). */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `work` while no other switch of this lake runs, in this process or another, with the journal as it
 * is on disk; a switch a killed process left is finished first.
 */
export function withJournal<T>(outDir: string, work: (journal: Journal) => Promise<T>): Promise<T> {
  const key = lakeRoot(outDir);
  const done = (queues.get(key) ?? Promise.resolve()).then(async () => {
    const lock = await lockJournal(outDir);
    try {
      const journal = readJournal(outDir);
      await recover(outDir, journal);
      return await work(journal);
    } finally {
      await lock.release();
    }
  });
  const ended = done.catch(() => undefined);
  queues.set(key, ended);
  void ended.then(() => {
    if (queues.get(key) === ended) queues.delete(key);
  });
  return done;
}

async function lockJournal(outDir: string) {
  const dir = join(lakeRoot(outDir), '.journal');
  await ensureLakeDir(outDir, dir);
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return await acquireLock(dir, {
        staleAfterMs: LOCK_STALE_MS,
        heartbeatMs: 10_000,
        crashPoints: false,
      });
    } catch (err) {
      if (!(err instanceof LockedError)) throw err;
      await new Promise((r) => setTimeout(r, pause)); // another process's switch: milliseconds
    }
  }
}

export interface SwitchSteps {
  /** Called once the journal names the switch, before the rename (crash points). */
  beforeRename?: () => void;
  afterRename?: () => void;
  /** Called after the first input is removed. */
  midRemove?: () => void;
}

/**
 * Publishes `temp` as `target` (a name no file ever had) in place of `inputs` (absolute paths): one
 * rename when nothing is replaced, a journaled switch otherwise. `dirs` go too once empty.
 */
export async function switchFiles(
  outDir: string,
  change: { stream: string; temp?: string; target: string; inputs: string[]; dirs?: string[] },
  steps: SwitchSteps = {},
): Promise<void> {
  const inputs = change.inputs.filter((f) => f !== change.target);
  const dirs = change.dirs ?? [];
  if (!inputs.length && !dirs.length) {
    steps.beforeRename?.();
    if (change.temp) await renameDurably(change.temp, change.target);
    steps.afterRename?.();
    return;
  }
  await withJournal(outDir, async (journal) => {
    const s: Switch = {
      stream: change.stream,
      target: relativeToLake(outDir, change.target),
      inputs: inputs.map((f) => relativeToLake(outDir, f)),
      dirs: dirs.map((d) => relativeToLake(outDir, d)),
    };
    await beginSwitch(outDir, journal, s);
    steps.beforeRename?.();
    if (change.temp) await renameDurably(change.temp, change.target);
    steps.afterRename?.();
    await removeInputs(lakeRoot(outDir), s, steps.midRemove);
    await endSwitch(outDir, journal);
  });
}

/** Finishes a switch a killed process left, if any (before reading the lake as a whole, e.g. a build). */
export async function finishSwitch(outDir: string): Promise<boolean> {
  if (!readJournal(outDir).switching) return false;
  return withJournal(outDir, () => Promise.resolve(true));
}

async function beginSwitch(outDir: string, journal: Journal, s: Switch): Promise<void> {
  journal.generation += journal.generation % 2 === 0 ? 1 : 2;
  journal.switching = s;
  await writeJsonAtomic(journalPath(outDir), journal);
}

async function endSwitch(outDir: string, journal: Journal): Promise<void> {
  journal.generation += journal.generation % 2 === 1 ? 1 : 2;
  journal.switching = null;
  await writeJsonAtomic(journalPath(outDir), journal);
}

/**
 * Finishes a switch a killed process left: if its new file is in place, the files it replaces go (the new
 * file holds what replaces them: it was complete before it was renamed in); if not, nothing changed.
 */
async function recover(outDir: string, journal: Journal): Promise<boolean> {
  const s = journal.switching;
  if (!s) return false;
  const root = lakeRoot(outDir);
  if (existsSync(join(root, s.target))) await removeInputs(root, s);
  await endSwitch(outDir, journal);
  return true;
}

async function removeInputs(root: string, s: Switch, afterFirst?: () => void): Promise<void> {
  const dirs = new Set<string>();
  for (const [i, input] of s.inputs.entries()) {
    rmSync(join(root, input), { force: true });
    dirs.add(join(root, input, '..'));
    if (i === 0) afterFirst?.();
  }
  for (const d of s.dirs) {
    try {
      rmdirSync(join(root, d)); // only once empty: a hidden leftover keeps it, and the cleanup removes that
    } catch {
      // not empty or gone
    }
    dirs.add(join(root, d, '..'));
  }
  for (const d of dirs) if (existsSync(d)) await fsyncPath(d);
}
