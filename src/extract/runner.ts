/**
 * Runs the streams of one extract, the definitions it is given, in their order (dependency order): groups,
 * users, offers, orders, redemption stats, credit, interactions. Groups within a stream run concurrently (one
 * shared limiter per credential keeps the API budget); a stream that fails marks the streams after it skipped.
 */
import type { PerksClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { StreamDefinition } from '../../pipelines/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import { now as clockNow } from '../shared/clock.js';
import { newRunId } from '../shared/run-id.js';
import type { SchemaChange } from '../lake/index.js';
import type { Landing } from './landing/landing.js';
import { planExtract, type Plan } from './planning/plan.js';
import { quarantineShare, type QuarantineShare } from './quarantine-share.js';
import { emptyStreamResult, newTally, type StreamResult } from './result.js';
import { createRunContext, type Event, type ExtractOptions, type RunContext } from './run-context.js';
import { shardLabel } from './per-user/shard.js';
import type { StateStore } from './state.js';
import { runStream } from './stream-run.js';
import type { Durably } from './landing/checkpoints.js';
import { landedElsewhere } from './per-user/worker-share.js';
import { heldMessage, heldMonths, type HeldMonth } from './held-months.js';
import type { Output } from '../output/index.js';

export interface ExtractDeps {
  /** Where the run writes (the command's Output): its folder, absolute, is `output.dir`. */
  output: Output;
  /** The stream definitions, in dependency order (the session gives pipelines/index.ts's). */
  streams: readonly StreamDefinition[];
  client: PerksClient;
  landing: Landing;
  state: StateStore;
  /** Runs a unit of dependent commits (checkpoints.ts); by default, just runs it. */
  durably?: Durably;
  emit?: (e: Event) => void;
  runId?: string;
  /** The run's stamp (its rows' `_extracted_at`, lake/run-stamps.ts); by default its `now`. */
  stamp?: Date;
}

export interface ExtractResult {
  runId: string;
  /** partial: everything ran, but more records were quarantined than the threshold allows (exit 4). */
  status: 'success' | 'partial' | 'error';
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  upperBound: string;
  level: 'organisation' | 'group';
  groups: { id: number; timezone: string; upperDay: string }[];
  streams: StreamResult[];
  api: ReturnType<PerksClient['counters']['snapshot']>;
  /** Calls per minute achieved over the run, divided by the configured limit. */
  limiterUtilisation: number;
  quarantined: number;
  /** Quarantined records against the threshold (PERKS_QUARANTINE_THRESHOLD). */
  quarantine?: QuarantineShare;
  /** With --plan: what the run would do; nothing was extracted. */
  plan?: Plan;
  /** `--shard K/N`: this worker's share of the per-user work. */
  shard?: string;
  /** Fields new, arriving as another type, or absent against the lake's schema history (set once landed). */
  schemaChanges?: SchemaChange[];
  /** Final months whose re-read the settled-change guard held back, not applied (exit 4), and why in one line. */
  held?: HeldMonth[];
  heldMessage?: string;
}

/** The named streams of `all` and, transitively, what they depend on, in definition order. */
export function selectStreams(
  all: readonly StreamDefinition[],
  names?: readonly string[],
): readonly StreamDefinition[] {
  if (!names?.length) return all;
  const wanted = new Set<string>();
  const add = (n: string) => {
    if (wanted.has(n)) return;
    wanted.add(n);
    all.find((s) => s.name === n)?.dependsOn.forEach(add);
  };
  names.forEach(add);
  return all.filter((s) => wanted.has(s.name));
}

export async function runExtract(config: Config, options: ExtractOptions, deps: ExtractDeps): Promise<ExtractResult> {
  const started = clockNow().getTime();
  const now = options.now ?? clockNow();
  const emit = deps.emit ?? (() => undefined);
  const callsBefore = deps.client.counters.snapshot().callsByOperation;
  const ctx = await createRunContext(
    config,
    options,
    { ...deps, emit },
    deps.runId ?? newRunId('', now),
    now,
    deps.stamp,
  );
  const streams = selectStreams(deps.streams, options.streams);
  if (options.planOnly) {
    const plan = await planExtract(ctx, streams, callsBefore);
    return { ...resultOf(ctx, started, []), plan };
  }
  emit({ event: 'run', run_id: ctx.runId, level: ctx.level, groups: ctx.groups.map((g) => g.id) });
  return resultOf(ctx, started, await runStreams(ctx, streams));
}

/** Each stream in turn; after a failure the rest are skipped, and a stream another worker lands is skipped too. */
async function runStreams(ctx: RunContext, streams: readonly StreamDefinition[]): Promise<StreamResult[]> {
  const results: StreamResult[] = [];
  let failed = false;
  for (const def of streams) {
    if (failed) {
      results.push(emptyStreamResult(def.name, 'skipped'));
      continue;
    }
    const elsewhere = landedElsewhere(ctx, def);
    if (elsewhere) {
      results.push(emptyStreamResult(def.name, 'skipped', [{ ...newTally(), notes: [elsewhere] }]));
      ctx.emit({ event: 'stream_skipped', stream: def.name, message: elsewhere });
      continue;
    }
    const result = await runStream(ctx, def);
    results.push(result);
    // A stream that failed for some groups only (failedGroups) lets the streams after it run.
    failed = result.status === 'error' && !result.failedGroups;
  }
  return results;
}

/**
 * The run's result: its status and exit code from the streams' (an error first, then quarantine beyond the
 * threshold), the API's figures, the groups as the run saw them. A plan runs no stream: it is a success.
 */
function resultOf(ctx: RunContext, started: number, results: StreamResult[]): ExtractResult {
  const api = ctx.client.counters.snapshot();
  const base = {
    runId: ctx.runId,
    status: 'success' as ExtractResult['status'],
    exitCode: ExitCode.success as number,
    startedAt: new Date(started).toISOString(),
    finishedAt: clockNow().toISOString(),
    upperBound: ctx.now.toISOString(),
    level: ctx.level,
    groups: ctx.groups.map((g) => ({ id: g.id, timezone: g.timezone, upperDay: g.upperDay })),
    streams: results,
    api,
  };
  if (ctx.options.planOnly) return { ...base, limiterUtilisation: 0, quarantined: 0 };
  const quarantine = quarantineShare(results, ctx.options.quarantineThreshold);
  const errored = results.find((r) => r.status === 'error');
  if (quarantine.message) ctx.emit({ event: 'warning', message: quarantine.message });
  // A month held back by the guard: the run did its work, but not all of it was applied (exit 4, as quarantine).
  const held = heldMonths(results);
  const message = heldMessage(held);
  if (message) ctx.emit({ event: 'warning', message });
  const partial = quarantine.above || held.length > 0;
  return {
    ...base,
    status: errored ? 'error' : partial ? 'partial' : 'success',
    exitCode: errored ? (errored.exitCode ?? ExitCode.failed) : partial ? ExitCode.partial : ExitCode.success,
    limiterUtilisation: Math.round((api.callsPerMinute / ctx.config.rateLimit) * 1000) / 1000,
    quarantined: quarantine.quarantined,
    quarantine,
    shard: ctx.options.shard ? shardLabel(ctx.options.shard) : undefined,
    ...(held.length ? { held, heldMessage: message } : {}),
  };
}
