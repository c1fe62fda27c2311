/**
 * How a reader that runs while the lake may be compacted gets a consistent answer (README, docs/analysts.md):
 * read `<out>/lake/_compaction.json` before and after the query, and take the answer only when no switch
 * was under way and none happened in between (the same even generation both times); otherwise, or when a
 * file the glob listed is gone by the time it is read, ask again. DuckDB reads the glob as usual.
 */
import { readJournal } from '../lake/index.js';

/** DuckDB's words for a glob that changed under it: a listed file removed, or two layouts side by side mid-move. */
const CHANGED = /No such file|No files found|Cannot open file|Hive partition mismatch|does not exist/i;

export interface ConsistentReadOptions {
  /** Give up after this long if a switch stays under way (a compaction killed and not rerun); default 60 s. */
  timeoutMs?: number;
  /** Pause between looks while a switch is under way; default 20 ms. */
  pauseMs?: number;
}

export async function readConsistently<T>(
  outDir: string,
  query: () => Promise<T>,
  options: ConsistentReadOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const before = readJournal(outDir);
    if (!before.switching) {
      try {
        const answer = await query();
        const after = readJournal(outDir);
        if (after.generation === before.generation && !after.switching) return answer;
      } catch (err) {
        if (!CHANGED.test(err instanceof Error ? err.message : String(err))) throw err;
      }
    }
    if (Date.now() > deadline)
      throw new Error(
        `the lake ${outDir} stayed mid-compaction for ${options.timeoutMs ?? 60_000} ms: run perks compact (or the next run) to finish it`,
      );
    await new Promise((r) => setTimeout(r, options.pauseMs ?? 20));
  }
}
