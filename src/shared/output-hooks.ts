/**
 * Two moments when the output must be durable beyond this machine, for an output kept in object storage
 * (src/store registers the hooks at the command's entry; with a local output both are no-ops):
 * - `checkpoint(reason)`: publish everything committed so far, now (a close's record before it is
 *   reported, a run's extract before its build);
 * - `journalWritten(file)`: a write-ahead journal gained lines that must reach the store before the
 *   calls they announce (the write-back's 'pending' entries before their posts).
 */
type Hook = (arg: string) => Promise<void>;

let checkpointHook: Hook | undefined;
let journalHook: Hook | undefined;

export function setOutputHooks(hooks: { checkpoint?: Hook; journalWritten?: Hook }): void {
  checkpointHook = hooks.checkpoint;
  journalHook = hooks.journalWritten;
}

export async function checkpoint(reason: string): Promise<void> {
  if (checkpointHook) await checkpointHook(reason);
}

export async function journalWritten(file: string): Promise<void> {
  if (journalHook) await journalHook(file);
}
