/**
 * 2. Readers during writes: a loop that reads the lake's orders as an analyst would while runs are
 * killed and rerun. The sandbox's orders do not change meanwhile, so every (group, day) a reader
 * sees must hold exactly the sandbox's orders of that local day: anything else is a torn window.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dayWindows, shiftDay } from '../../../src/extract/index.js';
import { withLakeConnection } from '../../../src/lake/index.js';
import { readConsistently } from '../../../src/compact/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { repeat } from '../../support/random.js';
import { todayUtc } from '../../../src/shared/clock.js';

export interface ReadTally {
  reads: number;
  errors: number;
  torn: number;
  problems: string[];
}

/** Orders per `${group}/${local day}` from `start` to tomorrow, from the sandbox's world. */
export function ordersPerDay(sandbox: Sandbox, start: string): Map<string, number> {
  const counts = new Map<string, number>();
  const end = shiftDay(todayUtc(), 2);
  for (const g of sandbox.world.groups) {
    for (const w of dayWindows(start, end, g.timezone)) {
      counts.set(
        `${g.id}/${w.startDay}`,
        sandbox.world.ordersOf(g.id, { from: w.start.getTime(), to: w.end.getTime() - 1 }).length,
      );
    }
  }
  return counts;
}

export function startOrdersReader(
  sandbox: Sandbox,
  start: string,
  dirs: () => string[],
  everyMs = 120,
): { stop(): Promise<ReadTally> } {
  const truth = ordersPerDay(sandbox, start);
  const tally: ReadTally = { reads: 0, errors: 0, torn: 0, problems: [] };
  const loop = repeat(everyMs, async () => {
    for (const dir of dirs().slice(-2)) if (existsSync(join(dir, 'lake', 'orders'))) await readOnce(dir, truth, tally);
  });
  return { stop: () => loop.stop().then(() => tally) };
}

async function readOnce(dir: string, truth: Map<string, number>, tally: ReadTally): Promise<void> {
  tally.reads += 1;
  try {
    // As the contract says for a reader overlapping a run: the answer counts when no compaction switched
    // files meanwhile (the journal's generation, README "Files, and which are current").
    const rows = await readConsistently(
      dir,
      () =>
        withLakeConnection(async (c) => {
          const r = await c.runAndReadAll(
            `SELECT organisation_group_id::VARCHAR || '/' || order_date::VARCHAR AS k, count(*)::BIGINT AS n, count(DISTINCT order_id)::BIGINT AS u
             FROM read_parquet($glob, hive_partitioning = true) GROUP BY ALL`,
            { glob: join(dir, 'lake', 'orders', '**', '*.parquet') },
          );
          return r.getRowObjectsJS() as { k: string; n: bigint; u: bigint }[];
        }),
      { timeoutMs: 3_000 },
    ).catch((err: Error) => {
      // A run killed mid-switch and not yet rerun: the reader waits for the rerun, this read does not count.
      if (/stayed mid-compaction/.test(err.message)) return undefined;
      throw err;
    });
    if (!rows) {
      tally.reads -= 1;
      return;
    }
    for (const x of rows) {
      const want = truth.get(x.k) ?? 0;
      if (Number(x.n) !== want || Number(x.u) !== Number(x.n)) {
        tally.torn += 1;
        if (tally.problems.length < 5)
          tally.problems.push(`window ${x.k}: read ${x.n} rows (${x.u} distinct), the sandbox holds ${want}`);
      }
    }
  } catch (err) {
    const message = (err as Error).message;
    // A lake folder made between the glob and the read has no file yet: not a read of committed data.
    if (/No files found/.test(message)) return;
    tally.errors += 1;
    if (tally.problems.length < 5) tally.problems.push(`read error: ${message.split('\n')[0]}`);
  }
}
