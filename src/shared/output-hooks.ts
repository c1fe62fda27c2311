/**
 * Three moments when the output must be durable beyond this machine, for an output kept in object storage: part
 * of the Output resolved once per command (store/lazy.ts, src/output: `output.hooks`), handed down to the stages
 * through their options; for a local output (and a stage whose caller passes none) they are no-ops.
 * - `checkpoint(reason)`: publish everything committed so far, now (a close's record before it is
 *   reported, a run's extract before its build);
 * - `journalWritten(file)`: a write-ahead journal gained lines that must reach the store before the
 *   calls they announce (the write-back's 'pending' entries before their posts);
 * - `progressMade(bytes)`: the extract committed more (a window, a batch of users, a snapshot, with the
 *   bytes landed since its last call): the store publishes it when its checkpoint interval says so, and stops
 *   the extract here when its lease was taken over.
 */
export interface OutputHooks {
  readonly checkpoint: (reason: string) => Promise<void>;
  readonly journalWritten: (file: string) => Promise<void>;
  readonly progressMade: (bytes: number) => Promise<void>;
}

/** A local folder's hooks: nothing to publish. */
export const LOCAL_OUTPUT_HOOKS: OutputHooks = {
  checkpoint: () => Promise.resolve(),
  journalWritten: () => Promise.resolve(),
  progressMade: () => Promise.resolve(),
};

/**
 * The commit gate: a snapshot of the output taken while commits go on beside it (the store's checkpoint during
 * an extract) waits until no commit is half done and holds new ones back meanwhile. A commit here is a unit
 * whose files depend on each other: a window's history, its file and its state; a snapshot and the user
 * changes recorded before it. Without a snapshot waiting, entering costs a counter.
 * Module state on purpose, unlike the hooks: it is a mutex of the process, which every commit and every snapshot
 * of the output in this process must share, whichever command or session runs them (a value handed down could be
 * two gates for one output).
 */
let inFlight = 0;
let drained: (() => void) | undefined;
let closed: Promise<void> | undefined;

export async function committing<T>(work: () => Promise<T>): Promise<T> {
  while (closed) await closed;
  inFlight++;
  try {
    return await work();
  } finally {
    if (--inFlight === 0) drained?.();
  }
}

/** Runs `work` once no commit is in flight, none starting until it ends (one such snapshot at a time). */
export async function betweenCommits<T>(work: () => Promise<T>): Promise<T> {
  while (closed) await closed;
  let open!: () => void;
  closed = new Promise<void>((resolve) => (open = resolve));
  try {
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    return await work();
  } finally {
    drained = undefined;
    closed = undefined;
    open();
  }
}
