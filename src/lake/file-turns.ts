/**
 * One lake file at a time, within this process. A compacted month file is replaced (renamed over) by
 * every day merged into it; the windows of a run land concurrently, so without turns one window's
 * DuckDB read of the month file could overlap another's rename, and DuckDB, which may open a file more
 * than once in a scan, would read the footer of one file and the pages of the other ("TProtocolException:
 * Invalid data"), and two merges would each drop the other's day. Other processes are kept out by the
 * output lock (a sharded worker lands only its own groups' files).
 */
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier turn on `file` has ended (whatever their outcome). */
export function inTurn<T>(file: string, work: () => Promise<T>): Promise<T> {
  const done = (turns.get(file) ?? Promise.resolve()).then(work);
  const ended = done.catch(() => undefined);
  turns.set(file, ended);
  void ended.then(() => {
    if (turns.get(file) === ended) turns.delete(file);
  });
  return done;
}
