/**
 * Runs ordered whatever the clock says. Under PERKS_NOW every process restarts its clock at the same
 * instant (a day replayed, the test suite's CLI children), and a machine clock can go back: a run may start
 * at, or before, the instant the run before it started. Its rows must still be the current ones (readers
 * rank a key's rows by `_extracted_at`, then `_run_id`), and no key may be landed twice with one
 * `_extracted_at` (the per-user streams' uniqueness contract). Once in the whole suite the crash scenario's
 * rerun at the killed child's own instant left 167 keys twice (test/reliability/scenarios/crash.ts).
 */
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { extract, shiftDay } from '../../src/extract/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { CRASH_ENV } from '../../src/shared/crash-points.js';
import { runCli, type CliResult } from '../support/cli.js';
import { atInstant } from '../support/clock.js';
import { lakeKeys, leftovers, missingAgainst, STREAM_KEYS } from '../support/lake-check.js';
import { orgConfig, orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForEachTest } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxForEachTest({ seed: 23 });
let start: string;
beforeEach(() => {
  start = shiftDay(sandbox().world.today, -10);
});

/** The CLI children's instant (orgEnv's PERKS_NOW). */
const noon = () => `${sandbox().world.today}T12:00:00Z`;
const env = (out: string, extra: Record<string, string> = {}) =>
  orgEnv(sandbox(), out, { PERKS_START_DATE: start, ...extra });

/** The run id a CLI run announced (its `run` event). */
function runIdOf(r: CliResult): string {
  const id = /"event":"run","run_id":"([^"]+)"/.exec(r.stdout + r.stderr)?.[1];
  if (!id) throw new Error(`no run event: ${r.stderr.slice(-300)}`);
  return id;
}

/** When run `runId` stamped its rows (`_extracted_at`), read back from the lake. */
async function stampOf(out: string, runId: string): Promise<Date> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT epoch_ms(max(_extracted_at))::BIGINT AS ms FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) WHERE _run_id = $run`,
      { glob: join(out, 'lake', 'credit', '**', '*.parquet'), run: runId },
    );
    return new Date(Number(r.getRowObjectsJS()[0].ms));
  });
}

/**
 * Per stream, the keys run `later` landed whose current row (latest `_extracted_at`, then `_run_id`, as the
 * staging models rank them) is another run's.
 */
async function staleWinners(out: string, later: string): Promise<Record<string, number>> {
  const stale: Record<string, number> = {};
  await withLakeConnection(async (c) => {
    for (const [stream, spec] of Object.entries(STREAM_KEYS)) {
      const r = await c.runAndReadAll(
        `WITH r AS (SELECT ${spec.key} AS k, _run_id, _extracted_at
                    FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)),
              won AS (SELECT k, _run_id FROM r
                      QUALIFY row_number() OVER (PARTITION BY k ORDER BY _extracted_at DESC, _run_id DESC) = 1)
         SELECT count(*)::BIGINT AS n FROM won WHERE _run_id <> $later AND k IN (SELECT k FROM r WHERE _run_id = $later)`,
        { glob: join(out, 'lake', stream, '**', '*.parquet'), later },
      );
      const n = Number(r.getRowObjectsJS()[0].n);
      if (n) stale[stream] = n;
    }
  });
  return stale;
}

/**
 * A first run (killed at `before-unlock`, or not), the platform changing, then a second run by `second`;
 * the lake is checked against an uninterrupted run of the changed platform.
 */
async function twoRuns(killed: boolean, second: (out: string, firstId: string) => Promise<string>) {
  const out = tempOut('perks-run-order-');
  const first = await runCli(['extract'], env(out, killed ? { [CRASH_ENV]: 'before-unlock' } : {}));
  if (killed) expect(first.signal, first.stderr.slice(-300)).toBe('SIGKILL');
  else expect(first.code, first.stderr.slice(-300)).toBe(0);
  const firstId = runIdOf(first);
  sandbox().churn(); // credit spent and granted, users joining and logging in: the second run reads other values

  const reference = tempOut('perks-run-order-ref-');
  const ref = await atInstant(noon(), () =>
    extract(orgConfig(sandbox(), reference, { PERKS_START_DATE: start }), { output: outputAt(reference) }),
  );
  expect(ref.exitCode).toBe(0);

  const secondId = await second(out, firstId);
  expect(secondId).not.toBe(firstId);
  const landed = await lakeKeys(out);
  const keys = missingAgainst(await lakeKeys(reference), landed);
  const duplicatedPerStream = Object.fromEntries(
    [...landed].filter(([, k]) => k.duplicated).map(([s, k]) => [s, k.duplicated]),
  );
  expect({ ...keys, duplicatedPerStream, stale: await staleWinners(out, secondId), left: leftovers(out) }).toEqual({
    missing: 0,
    duplicated: 0,
    perStream: {},
    duplicatedPerStream: {},
    stale: {},
    left: [],
  });
  return { out, firstId, secondId };
}

/** The second run as a CLI child at `instant`. */
const cliAt = (instant: () => string) => async (out: string) => {
  const r = await runCli(['extract'], env(out, { PERKS_NOW: instant() }));
  expect(r.code, r.stderr.slice(-300)).toBe(0);
  return runIdOf(r);
};

describe("a run at or before the previous run's instant", () => {
  test('killed before unlocking, rerun at the same PERKS_NOW: each key once, the rerun current', async () => {
    await twoRuns(true, cliAt(noon));
  }, 180_000);

  test('killed before unlocking, rerun at the very instant the killed run stamped its rows', async () => {
    await twoRuns(true, async (out, killedId) => {
      const at = await stampOf(out, killedId);
      const r = await atInstant(at, () =>
        extract(orgConfig(sandbox(), out, { PERKS_START_DATE: start }), { output: outputAt(out), now: at }),
      );
      expect(r.exitCode).toBe(0);
      return r.runId;
    });
  }, 180_000);

  test('killed before unlocking, rerun ten minutes earlier by the clock (a clock gone back)', async () => {
    await twoRuns(
      true,
      cliAt(() => `${sandbox().world.today}T11:50:00Z`),
    );
  }, 180_000);

  test('a plain second run at the same PERKS_NOW', async () => {
    await twoRuns(false, cliAt(noon));
  }, 180_000);
});
