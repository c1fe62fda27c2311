/**
 * Runs the streams of one extract in dependency order: groups, users, offers, orders, redemption
 * stats, credit, interactions. Groups within a stream run concurrently (one shared limiter per
 * credential keeps the API budget); a stream that fails marks the streams after it skipped.
 */
import { randomBytes } from 'node:crypto';
import { inScope, type PerksClient } from '../api/index.js';
import { DEFAULTS, type Config } from '../config/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import type { StreamDefinition } from '../../pipelines/index.js';
import { resolveGroups, timezoneOf, type LenientGroup } from './groups.js';
import type { Group } from '../resources/group.js';
import type { Landing } from './landing.js';
import { runPerUserGroup } from './per-user-job.js';
import { forEachLimit } from './pool.js';
import type { Event, ExtractOptions, GroupInfo, RunContext } from './run-context.js';
import { newTally, type GroupTally, type StreamResult } from './result.js';
import { quarantineGroupRejects, runSnapshot } from './snapshot-job.js';
import { quarantineShare, type QuarantineShare } from './quarantine-share.js';
import type { StateStore } from './state.js';
import { runWindowedGroup } from './windowed-job.js';
import { localDay } from './windows.js';
import { planExtract, type Plan } from './plan.js';
import { awaitHandoff, writeHandoff } from './handoff.js';
import { landsSharedStreams, shardLabel } from './shard.js';
import { landedElsewhere, perUserBudgets } from './worker-share.js';
import { now as clockNow } from '../shared/clock.js';

export interface ExtractDeps {
  /** The stream definitions, in dependency order (the session gives pipelines/index.ts's). */
  streams: readonly StreamDefinition[];
  client: PerksClient;
  landing: Landing;
  state: StateStore;
  emit?: (e: Event) => void;
  runId?: string;
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
}

function emptyResult(ctx: RunContext, started: number): ExtractResult {
  return {
    runId: ctx.runId,
    status: 'success',
    exitCode: ExitCode.success,
    startedAt: new Date(started).toISOString(),
    finishedAt: clockNow().toISOString(),
    upperBound: ctx.now.toISOString(),
    level: ctx.level,
    groups: ctx.groups.map((g) => ({ id: g.id, timezone: g.timezone, upperDay: g.upperDay })),
    streams: [],
    api: ctx.client.counters.snapshot(),
    limiterUtilisation: 0,
    quarantined: 0,
  };
}

export function newRunId(now = clockNow()): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
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
  const started = Date.now();
  const now = options.now ?? clockNow();
  const runId = deps.runId ?? newRunId(now);
  const emit = deps.emit ?? (() => undefined);
  const callsBefore = deps.client.counters.snapshot().callsByOperation;
  const resolved = await resolveGroups(deps.client, config.groupIds);
  const groups: GroupInfo[] = resolved.groups.map((group) =>
    groupInfo(group, resolved.lenient.get(group.id), now, emit),
  );
  const ctx: RunContext = {
    runId,
    config,
    client: deps.client,
    outDir: config.output,
    now,
    options: {
      ...DEFAULTS.extract,
      maxAgeDays: config.refreshDays,
      quarantineThreshold: config.quarantineThreshold,
      ...stripUndefined(options),
    },
    groups,
    groupRejects: resolved.rejects,
    level: resolved.level,
    landing: deps.landing,
    state: deps.state,
    activity: new Map(),
    leadsOrganisation: leadsOrganisation(options, groups, resolved.reachable),
    emit,
  };
  if (options.planOnly) {
    const plan = await planExtract(ctx, selectStreams(deps.streams, options.streams), callsBefore);
    return { ...emptyResult(ctx, started), plan };
  }
  emit({ event: 'run', run_id: runId, level: resolved.level, groups: groups.map((g) => g.id) });

  const results: StreamResult[] = [];
  let failed = false;
  for (const def of selectStreams(deps.streams, options.streams)) {
    if (failed) {
      results.push({
        name: def.name,
        status: 'skipped',
        groups: [],
        rows: 0,
        rejected: 0,
        calls: 0,
        retries: 0,
        throttled: 0,
        ms: 0,
      });
      continue;
    }
    const elsewhere = landedElsewhere(ctx, def);
    if (elsewhere) {
      results.push({
        name: def.name,
        status: 'skipped',
        groups: [{ ...newTally(), notes: [elsewhere] }],
        rows: 0,
        rejected: 0,
        calls: 0,
        retries: 0,
        throttled: 0,
        ms: 0,
      });
      emit({ event: 'stream_skipped', stream: def.name, message: elsewhere });
      continue;
    }
    const result = await runStream(ctx, def);
    results.push(result);
    // A stream that failed for some groups only (failedGroups) lets the streams after it run.
    failed = result.status === 'error' && !result.failedGroups;
  }

  const api = deps.client.counters.snapshot();
  const quarantine = quarantineShare(results, ctx.options.quarantineThreshold);
  const errored = results.find((r) => r.status === 'error');
  if (quarantine.message) emit({ event: 'warning', message: quarantine.message });
  return {
    runId,
    status: errored ? 'error' : quarantine.above ? 'partial' : 'success',
    exitCode: errored ? (errored.exitCode ?? ExitCode.failed) : quarantine.above ? ExitCode.partial : ExitCode.success,
    startedAt: new Date(started).toISOString(),
    finishedAt: clockNow().toISOString(),
    upperBound: now.toISOString(),
    level: resolved.level,
    groups: groups.map((g) => ({ id: g.id, timezone: g.timezone, upperDay: g.upperDay })),
    streams: results,
    api,
    limiterUtilisation: Math.round((api.callsPerMinute / config.rateLimit) * 1000) / 1000,
    quarantined: quarantine.quarantined,
    quarantine,
    shard: options.shard ? shardLabel(options.shard) : undefined,
  };
}

/** The run's view of one group: its timezone (UTC with a warning when missing) and last closed local day. */
function groupInfo(group: Group, lenient: LenientGroup | undefined, now: Date, emit: (e: Event) => void): GroupInfo {
  const warn = (message: string) => emit({ event: 'warning', group: group.id, message });
  if (lenient)
    warn(
      `group ${group.id}: its record was quarantined (${lenient.reason}); the run goes on with the fields it could read`,
    );
  const timezone = lenient?.timezoneError ? 'UTC' : timezoneOf(group, warn);
  const info: GroupInfo = { group, id: group.id, timezone, upperDay: localDay(now, timezone) };
  if (lenient) info.recordQuarantined = lenient.reason;
  if (lenient?.timezoneError) info.timezoneError = lenient.timezoneError;
  return info;
}

function leadsOrganisation(options: ExtractOptions, groups: GroupInfo[], reachable: number[] | undefined): boolean {
  if (!options.groupSlice || !reachable?.length) return true;
  return groups.some((g) => g.id === Math.min(...reachable));
}

async function runStream(ctx: RunContext, def: StreamDefinition): Promise<StreamResult> {
  const before = ctx.client.counters.snapshot();
  const started = Date.now();
  const tallies: GroupTally[] = [];
  const result: StreamResult = {
    name: def.name,
    status: 'success',
    groups: tallies,
    rows: 0,
    rejected: 0,
    calls: 0,
    retries: 0,
    throttled: 0,
    ms: 0,
  };
  ctx.emit({ event: 'stream', stream: def.name });
  try {
    if (def.kind === 'snapshot' && def.scope === 'organisation' && def.name !== 'groups') {
      tallies.push(await groupPart(ctx, def, undefined, () => runSnapshot(ctx, def)));
    } else if (def.kind === 'snapshot') {
      await forEachLimit(
        ctx.groups,
        ctx.options.concurrency,
        async (g) => void tallies.push(await groupPart(ctx, def, g.id, () => runSnapshot(ctx, def, g))),
      );
      if (def.name === 'groups') tallies.push(await quarantineGroupRejects(ctx, def));
    } else if (def.kind === 'windowed') {
      // A group whose timezone cannot be read has no local days: its windows fail, the other groups' run.
      const unreadable = ctx.groups.filter((g) => g.timezoneError);
      await forEachLimit(
        ctx.groups.filter((g) => !g.timezoneError),
        ctx.options.concurrency,
        async (g) => void tallies.push(await groupPart(ctx, def, g.id, () => runWindowedGroup(ctx, def, g))),
      );
      if (unreadable.length) {
        result.status = 'error';
        result.error = `${unreadable.map((g) => g.timezoneError).join('; ')}: no ${def.name} window extracted for ${unreadable.length === 1 ? 'it' : 'them'}, the other groups' were; fix the timezone upstream and rerun`;
        result.exitCode = ExitCode.failed;
        result.failedGroups = unreadable.map((g) => g.id);
        ctx.emit({ event: 'error', stream: def.name, message: result.error });
      }
    } else {
      const shard = ctx.options.shard;
      if (shard) await (ctx.handoff ??= landsSharedStreams(shard) ? writeHandoff(ctx) : awaitHandoff(ctx));
      const budgets = await perUserBudgets(ctx, def);
      for (const g of ctx.groups)
        tallies.push(await groupPart(ctx, def, g.id, () => runPerUserGroup(ctx, def, g, budgets.get(g.id) ?? 0)));
    }
  } catch (err) {
    result.status = 'error';
    result.error = redact(err instanceof Error ? err.message : String(err));
    // A corrupt state file is the operator's to fix (2), refused credentials too (3): keep their codes.
    result.exitCode = (err as { exitCode?: number }).exitCode ?? ExitCode.failed;
    ctx.emit({ event: 'error', stream: def.name, message: result.error });
  }
  const after = ctx.client.counters.snapshot();
  result.rows = tallies.reduce((n, t) => n + t.rows, 0);
  result.rejected = tallies.reduce((n, t) => n + t.rejected, 0);
  result.calls = after.calls - before.calls;
  result.retries = after.retries - before.retries;
  result.throttled = after.throttled - before.throttled;
  result.ms = Date.now() - started;
  for (const t of tallies) {
    if (t.expected !== undefined && t.expected !== t.rows + t.rejected) {
      t.notes.push(
        `the listings reported ${t.expected} records, ${t.rows} landed and ${t.rejected} quarantined: ${t.expected - t.rows - t.rejected} differ (records added or removed while paging)`,
      );
    }
  }
  ctx.emit({
    event: 'stream_done',
    stream: def.name,
    status: result.status,
    rows: result.rows,
    calls: result.calls,
    ms: result.ms,
  });
  return result;
}

/**
 * One group's part of a stream, with the calls, retries and 429s it caused (counted in its own scope,
 * see Counters) and its time: the run manifest's per-group figures.
 */
async function groupPart(
  ctx: RunContext,
  def: StreamDefinition,
  group: number | undefined,
  work: () => Promise<GroupTally>,
): Promise<GroupTally> {
  const scope = `${def.name}/${group ?? 'organisation'}`;
  const traffic = () => ({ ...(ctx.client.counters.byScope[scope] ?? { calls: 0, retries: 0, throttled: 0 }) });
  const before = traffic();
  const started = Date.now();
  const tally = await inScope(scope, work);
  const after = traffic();
  return {
    ...tally,
    calls: after.calls - before.calls,
    retries: after.retries - before.retries,
    throttled: after.throttled - before.throttled,
    ms: Date.now() - started,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
