/**
 * The build record, `<out>/state/build.json`: the last build attempted and the last one that succeeded, each
 * with the newest extract run it read (`lakeAt`, that run's finish). `perks status` compares it with the
 * extracts since: marts, reports and BI files left behind by failing builds are never silently stale.
 * Written atomically after every build, success or failure; a build killed before it leaves the record as it was.
 * Its keys are snake_case (`last_attempt`, `as_of`, `lake_at`; docs/reference/operations.md, "JSON keys"); a
 * record written in camelCase by a release before issue 43 is read the same.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { readRunManifests, writeJsonAtomic } from '../../lake/index.js';
import { camelKeys, snakeKeys } from '../../shared/json-keys.js';
import type { Output } from '../../output/index.js';

export const BuildOutcome = z.object({
  /** When the build ended (the program's clock). */
  at: z.string(),
  asOf: z.string(),
  ok: z.boolean(),
  /** The finish of the newest extract run the build read (null: none had run). */
  lakeAt: z.string().nullable(),
  /** The first error, one line (a failed build). */
  error: z.string().optional(),
  /** Data tests of warn severity that found rows. */
  warnings: z.number().int().min(0).default(0),
});
export type BuildOutcome = z.infer<typeof BuildOutcome>;

export const BuildRecord = z.object({
  lastAttempt: BuildOutcome,
  lastSuccess: BuildOutcome.nullable(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

export const buildRecordPath = (output: Output): string => output.state('build.json');

/** The record, or undefined when no build has finished yet (or the file is unreadable: the next build rewrites it). */
export async function readBuildRecord(output: Output): Promise<BuildRecord | undefined> {
  const text = await readFile(buildRecordPath(output), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = BuildRecord.safeParse(camelKeys(JSON.parse(text))); // either spelling
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The finish of the newest extract run in the output (null: none yet). */
export async function newestExtractAt(output: Output): Promise<string | null> {
  return (await readRunManifests(output.dir)).at(-1)?.finishedAt ?? null;
}

/** Records a finished build: always the attempt, and the success when it succeeded. */
export async function recordBuild(output: Output, outcome: BuildOutcome): Promise<void> {
  const before = await readBuildRecord(output);
  const record: BuildRecord = {
    lastAttempt: outcome,
    lastSuccess: outcome.ok ? outcome : (before?.lastSuccess ?? null),
  };
  await writeJsonAtomic(buildRecordPath(output), snakeKeys(record));
}
