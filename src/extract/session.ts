/**
 * One extract run over the output directory: takes the lock of what it writes (work-lock.ts), clears
 * what killed runs left behind, runs the streams, writes the run manifest, releases the lock.
 */
import { clientFromConfig, type PerksClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import {
  cleanTemporaryFiles,
  finishSwitch,
  foldRun,
  lockPath,
  nextRunStamp,
  readSchemaHistory,
  recordRunStamp,
  runChanges,
  writeSchemaHistory,
  type RunSeen,
  StateStore as LakeStateStore,
  tightenLake,
  writeRunManifest,
} from '../lake/index.js';
import { streams } from '../../pipelines/index.js';
import { lakeLanding } from './landing/lake-landing.js';
import { checkpointed } from './landing/checkpoints.js';
import type { Output } from '../output/index.js';
import type { Event, ExtractOptions } from './run-context.js';
import { runExtract, type ExtractResult } from './runner.js';
import { newRunId } from '../shared/run-id.js';
import { acquireWorkLock, assertNoOverlap, isWholeScope, scopeKey, type WorkScope } from './per-user/work-lock.js';
import { now } from '../shared/clock.js';
import { perksVersion } from '../shared/version.js';

export interface ExtractSessionOptions extends ExtractOptions {
  client?: PerksClient;
  emit?: (e: Event) => void;
  /** Take the output directory's lock (a caller that already holds the whole directory's lock passes false). */
  lock?: boolean;
  /** Work that must happen under the same lock, after landing (the forget step of `perks extract`). */
  afterLanding?: (result: ExtractResult) => Promise<void>;
  /** Where the run writes (the command's Output): its folder, and its progress reported to a store. */
  output: Output;
}

export async function extract(
  config: Config,
  options: ExtractSessionOptions,
): Promise<ExtractResult & { manifest: string }> {
  const outDir = options.output.dir;
  const scope: WorkScope = { groups: options.groupSlice ? config.groupIds : undefined, shard: options.shard };
  // A plan only reads the state: it takes no lock and writes nothing (not even the output directory).
  const planOnly = options.planOnly === true;
  const lock = options.lock === false || planOnly ? undefined : await acquireWorkLock(outDir, scope);
  if (!lock && !planOnly) await assertNoOverlap(outDir, scope, lockPath(outDir));
  const client = options.client ?? clientFromConfig(config);
  try {
    // Other workers of the round may be writing right now: only a whole-directory run may sweep.
    if (isWholeScope(scope) && !planOnly) await cleanTemporaryFiles(outDir);
    // The lake holds personal data: files an older version left world-readable are tightened too.
    if (!planOnly) await tightenLake(outDir);
    // A switch of lake files a killed run left half done is finished before readers wait on it any longer.
    if (!planOnly) await finishSwitch(outDir);
    const startedAt = options.now ?? now();
    // The rows' `_extracted_at` and the run id follow every earlier run's, even on a clock at or behind
    // theirs (a replayed PERKS_NOW, a clock set back): readers take the latest as current, and --verify lets the
    // lake decide after a write-back (lake/run-stamps.ts).
    const stamp = planOnly ? startedAt : await nextRunStamp(outDir, startedAt);
    const runId = newRunId('', stamp);
    const { landing, durably } = checkpointed(
      lakeLanding(outDir, runId, stamp, () => recordRunStamp(outDir, scopeKey(scope), stamp)),
      options.output.hooks.progressMade,
    );
    const state = new LakeStateStore(outDir, { snakeCaseFile: true });
    const result = await runExtract(
      config,
      { ...options, now: startedAt },
      { output: options.output, streams, client, landing, state, durably, emit: options.emit, runId, stamp },
    );
    if (result.plan) return { ...result, manifest: '' };
    await options.afterLanding?.(result);
    // What the records carried (the schema history's input), and what changed against the history before.
    const seen: RunSeen = { runId, at: startedAt.toISOString(), streams: Object.fromEntries(landing.seen) };
    const before = await readSchemaHistory(outDir);
    const schemaChanges = runChanges(before, seen);
    // snake_case keys on disk (run-manifest.ts); the file's mode as every state file's.
    const manifest = await writeRunManifest(
      outDir,
      {
        perksVersion: perksVersion(),
        ...result,
        schemaChanges,
        unknownFields: Object.fromEntries(landing.unknownFields),
        schema: { streams: seen.streams },
      },
      { mode: 0o600 },
    );
    // After the manifest: a run killed in between is folded from its manifest by the next reader.
    await writeSchemaHistory(outDir, foldRun(before, seen));
    return { ...result, manifest, schemaChanges };
  } finally {
    if (!options.client) await client.close();
    await lock?.release();
  }
}
