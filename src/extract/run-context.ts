/**
 * What every job of one extract run shares: the run id, the frozen upper bound, the client, the lake,
 * the state store, the per-stream results and the event sink.
 */
import type { PerksClient, RecordParseError } from '../api/index.js';
import { DEFAULTS, type Config } from '../config/index.js';
import type { Group } from '../resources/group.js';
import { resolveGroups, timezoneOf, type LenientGroup } from './groups.js';
import type { Landing } from './landing/landing.js';
import type { StateStore } from './state.js';
import type { Durably } from './landing/checkpoints.js';
import type { StreamName } from '../../pipelines/index.js';
import { localDay } from './date-windows.js';
import { ConfigError } from '../shared/exit-codes.js';
import type { Output } from '../output/index.js';

export interface ExtractOptions {
  /** Streams to run (and what they need); all when absent. */
  streams?: StreamName[];
  /** Backfill range, local days [startDate, endDate). */
  startDate?: string;
  endDate?: string;
  fullRefresh?: boolean;
  /** Call budget of the per-user streams, in minutes at the current rate limit. */
  budgetMinutes?: number;
  /** Every user is refreshed at least this often when the budget allows (PERKS_REFRESH_DAYS, --refresh-days). */
  maxAgeDays?: number;
  /** Fraction of quarantined records above which the run ends partial, exit 4 (PERKS_QUARANTINE_THRESHOLD). */
  quarantineThreshold?: number;
  /** Print the plan; extract nothing. */
  planOnly?: boolean;
  /** Freeze "now" (tests); defaults to the wall clock at the start of the run. */
  now?: Date;
  /** Windows or users in flight at once per stream. */
  concurrency?: number;
  /** This worker's share of the per-user work (`--shard K/N`); shard 1 also lands the other streams. */
  shard?: Shard;
  /** How long shards 2..N wait for shard 1's hand-off (minutes). */
  shardWaitMinutes?: number;
  /**
   * The groups were named on the command line (`--groups`): this worker is one slice of the
   * organisation, and lands the organisation-wide streams (offers) only if it holds the lowest group id.
   */
  groupSlice?: boolean;
  /**
   * Per group, the users the per-user streams refresh, in this order, instead of ranking every user
   * (`perks close` refreshes the credit of the month's holders); the whole budget goes to them.
   */
  refreshUsers?: Record<number, readonly number[]>;
  /**
   * Only these of the groups the credential reaches (`perks close --group`): the others are neither read nor
   * written. A group it does not reach stops the run (exit 2).
   */
  onlyGroups?: readonly number[];
  /**
   * The months the settled-change guard weighs (windows/settled-guard.ts): `settled` (default) the months final
   * before the run; `all` every month re-read (the re-read before a close, which is about to sign the month).
   */
  guardMonths?: 'settled' | 'all';
  /** Apply a re-read the guard would hold: the operator accepted it (`--accept-changes`). */
  acceptChanges?: boolean;
}

export interface GroupInfo {
  group: Group;
  id: number;
  timezone: string;
  /** First local day NOT closed at the run's start: windows end here (exclusive). */
  upperDay: string;
  /** The group's record was refused and quarantined: it lands no groups row, its id and timezone were read leniently. */
  recordQuarantined?: string;
  /** The timezone cannot be read at all: the group's windowed streams fail, its other streams run. */
  timezoneError?: string;
}

export interface Event {
  event: string;
  stream?: string;
  group?: number;
  [key: string]: unknown;
}

/** This worker's share of the per-user work: `--shard K/N` (per-user/shard.ts parses and applies it). */
export interface Shard {
  /** 1-based: this worker is shard `index` of `count`. */
  index: number;
  count: number;
}

export interface RunContext {
  runId: string;
  config: Config;
  client: PerksClient;
  /** Where the run writes (the command's Output): its folder, absolute, is `output.dir`. */
  output: Output;
  now: Date;
  /**
   * The run's stamp (its rows' `_extracted_at`), at or after `now` (lake/run-stamps.ts): per-user listings read
   * up to it, so they hold every interaction a write-back of the directory sent before this run, whatever the
   * clock (under PERKS_NOW a write-back's process reached a later instant than this one's start).
   */
  stamp: Date;
  options: Required<
    Pick<ExtractOptions, 'budgetMinutes' | 'maxAgeDays' | 'quarantineThreshold' | 'concurrency' | 'shardWaitMinutes'>
  > &
    ExtractOptions;
  groups: GroupInfo[];
  /** Group records of the listing the schema refused: the groups stream quarantines them. */
  groupRejects: RecordParseError[];
  level: 'organisation' | 'group';
  landing: Landing;
  state: StateStore;
  /** Runs a unit of commits that depend on each other (a window and its state): checkpoints.ts. */
  durably: Durably;
  /** Lower-cased emails and user ids seen active (orders, redemptions) in this run's windows, per group. */
  activity: Map<number, Activity>;
  /** Sharded runs: shard 1's hand-off written, or shard 2..N's awaited (once per run). */
  handoff?: Promise<void>;
  /** This worker lands the organisation-wide streams (offers). */
  leadsOrganisation: boolean;
  emit: (e: Event) => void;
}

/** Users seen in this run's windows: any new or changed record, and (`credit`) those bearing on credit. */
export interface Activity {
  emails: Set<string>;
  ids: Set<number>;
  credit: { emails: Set<string>; ids: Set<number> };
}

export const newActivity = (): Activity => ({
  emails: new Set(),
  ids: new Set(),
  credit: { emails: new Set(), ids: new Set() },
});

export function activityOf(ctx: RunContext, group: number): Activity {
  let a = ctx.activity.get(group);
  if (!a) ctx.activity.set(group, (a = newActivity()));
  return a;
}

/** Adds `from`'s users to `into` (a window's, once it is committed: a window held back marks no one). */
export function mergeActivity(into: Activity, from: Activity): void {
  for (const e of from.emails) into.emails.add(e);
  for (const i of from.ids) into.ids.add(i);
  for (const e of from.credit.emails) into.credit.emails.add(e);
  for (const i of from.credit.ids) into.credit.ids.add(i);
}

/**
 * The context of a run that starts now: the groups the credential reaches (resolved with the API, each with
 * its timezone and last closed local day), the options with their defaults, an empty activity.
 */
export async function createRunContext(
  config: Config,
  options: ExtractOptions,
  deps: {
    output: Output;
    client: PerksClient;
    landing: Landing;
    state: StateStore;
    durably?: Durably;
    emit: (e: Event) => void;
  },
  runId: string,
  now: Date,
  stamp: Date = now,
): Promise<RunContext> {
  const resolved = await resolveGroups(deps.client, config.groupIds);
  const groups = onlyThose(resolved.groups, options.onlyGroups).map((group) =>
    groupInfo(group, resolved.lenient.get(group.id), now, deps.emit),
  );
  return {
    runId,
    config,
    client: deps.client,
    output: deps.output,
    now,
    stamp,
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
    durably: deps.durably ?? ((work) => work()),
    activity: new Map(),
    leadsOrganisation: leadsOrganisation(options, groups, resolved.reachable),
    emit: deps.emit,
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

/** The groups asked for (`onlyGroups`), each of which the credential must reach; all of them when none are asked for. */
function onlyThose(groups: Group[], only: readonly number[] | undefined): Group[] {
  if (!only) return groups;
  const missing = only.filter((id) => !groups.some((g) => g.id === id));
  if (missing.length)
    throw new ConfigError(
      `group ${missing.join(', ')} is not among the groups the credential reaches` +
        ` (${groups.map((g) => g.id).join(', ') || 'none'}): check PERKS_GROUP_IDS, PERKS_BASE_URL and the credential`,
    );
  return groups.filter((g) => only.includes(g.id));
}

function leadsOrganisation(options: ExtractOptions, groups: GroupInfo[], reachable: number[] | undefined): boolean {
  if (!options.groupSlice || !reachable?.length) return true;
  return groups.some((g) => g.id === Math.min(...reachable));
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
