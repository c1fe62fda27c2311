/**
 * `<out>/lake/_compaction.json`: the generation of the lake's file set and the switch under way, if any.
 * A compaction writes it (atomically) before it renames a new file in and removes the files it replaces,
 * and again when they are gone: the generation is odd while a switch is under way, even otherwise.
 * A reader that wants a consistent view reads it before and after its query (docs/analysts.md): the
 * same even generation both times means no switch happened in between. A compaction killed mid-switch
 * leaves it odd; the next one finishes the switch first (`recover`).
 */
import { existsSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { lakeRoot, writeJsonAtomic } from '../lake/index.js';
import { fsyncDir } from './files.js';

export interface Switch {
  stream: string;
  /** The new file (relative to the lake), renamed in before the inputs go. */
  target: string;
  /** The files it replaces (relative to the lake). */
  inputs: string[];
  /** Folders to remove once empty (legacy day folders). */
  dirs: string[];
}

export interface Journal {
  generation: number;
  switching: Switch | null;
}

export const journalPath = (outDir: string) => join(lakeRoot(outDir), '_compaction.json');

export function readJournal(outDir: string): Journal {
  try {
    const j = JSON.parse(readFileSync(journalPath(outDir), 'utf8')) as Journal;
    if (Number.isInteger(j.generation)) return { generation: j.generation, switching: j.switching ?? null };
  } catch {
    // none yet (or torn: it is only ever replaced whole, so a torn one is not ours): start at 0
  }
  return { generation: 0, switching: null };
}

export async function beginSwitch(outDir: string, journal: Journal, s: Switch): Promise<void> {
  journal.generation += journal.generation % 2 === 0 ? 1 : 2;
  journal.switching = s;
  await writeJsonAtomic(journalPath(outDir), journal);
}

export async function endSwitch(outDir: string, journal: Journal): Promise<void> {
  journal.generation += journal.generation % 2 === 1 ? 1 : 2;
  journal.switching = null;
  await writeJsonAtomic(journalPath(outDir), journal);
}

/**
 * Finishes a switch a killed compaction left: if its new file is in place, the files it replaces go
 * (the new file was checked to hold all their rows before it was renamed in); if not, nothing changed.
 */
export async function recover(outDir: string, journal: Journal): Promise<boolean> {
  const s = journal.switching;
  if (!s) return false;
  const root = lakeRoot(outDir);
  if (existsSync(join(root, s.target))) await removeInputs(root, s);
  await endSwitch(outDir, journal);
  return true;
}

export async function removeInputs(root: string, s: Switch, afterFirst?: () => void): Promise<void> {
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
  for (const d of dirs) if (existsSync(d)) await fsyncDir(d);
}

export const relativeToLake = (outDir: string, path: string) => relative(lakeRoot(outDir), path);

/** Finishes a switch a killed compaction left, if any (a caller holding the output lock, before it reads the lake). */
export async function finishSwitch(outDir: string): Promise<boolean> {
  return recover(outDir, readJournal(outDir));
}
