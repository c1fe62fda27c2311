/**
 * One month folder at a time, within this process. The windows of a run land concurrently; two days merged
 * into one compacted month file would each write the next generation from the same file and drop the
 * other's day, and a read of the month file (activity.ts) could find it switched away under it. Other
 * processes are kept out by the output lock (a sharded worker lands only its own groups' files).
 */
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier turn on `key` (a month folder) has ended (whatever their outcome). */
export function inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
  const done = (turns.get(key) ?? Promise.resolve()).then(work);
  const ended = done.catch(() => undefined);
  turns.set(key, ended);
  void ended.then(() => {
    if (turns.get(key) === ended) turns.delete(key);
  });
  return done;
}
