/**
 * The tests' temporary folders, all made by tempOut: a test's kept until the run ends, a scenario's
 * (Scratch, withScratch) removed again when it ends, whatever happens in between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Scratch {
  private readonly dirs: string[] = [];

  constructor(private readonly prefix: string) {}

  /** A fresh empty directory (tempOut), removed by clean(). */
  dir(name = ''): string {
    const dir = tempOut(`perks-${this.prefix}${name ? `-${name}` : ''}-`);
    this.dirs.push(dir);
    return dir;
  }

  clean(): void {
    while (this.dirs.length) rmSync(this.dirs.pop()!, { recursive: true, force: true });
  }
}

/**
 * A fresh empty folder (an output directory, a project, a server's files), kept until the run ends: every
 * test's temporary folder is made here, and run-temp-dir.ts removes them all with the run's folder if the
 * run passed, or keeps them to look at if it failed.
 */
export function tempOut(prefix = 'perks-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs `work` with a scratch area that is removed afterwards. */
export async function withScratch<T>(prefix: string, work: (scratch: Scratch) => Promise<T>): Promise<T> {
  const scratch = new Scratch(prefix);
  try {
    return await work(scratch);
  } finally {
    scratch.clean();
  }
}
