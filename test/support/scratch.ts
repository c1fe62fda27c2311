/** Temporary directories a scenario makes and removes again, whatever happens in between. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Scratch {
  private readonly dirs: string[] = [];

  constructor(private readonly prefix: string) {}

  /** A fresh empty directory under the system's temporary directory. */
  dir(name = ''): string {
    const dir = mkdtempSync(join(tmpdir(), `perks-${this.prefix}${name ? `-${name}` : ''}-`));
    this.dirs.push(dir);
    return dir;
  }

  clean(): void {
    while (this.dirs.length) rmSync(this.dirs.pop()!, { recursive: true, force: true });
  }
}

/** A fresh output directory for one test, kept until the run ends (run-temp-dir.ts removes it if the run passed). */
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
