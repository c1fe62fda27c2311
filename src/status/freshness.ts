/**
 * Freshness, as dbt's `source freshness` judges it: each stream and group's last successful extract
 * against two ages. Past --warn-after: warn (exit 4, look at it); past --error-after, or never extracted:
 * error (exit 1, alert). The worst stream and group decides; a failed last run with a recent success is
 * shown, not judged (the age says whether it matters yet).
 * The marts are judged too, once a build has been recorded: marts behind the lake (extracts since their
 * build) are as old as their last successful build, judged by the same two ages; a last build that failed is
 * at least a warning whatever the age (a build failing every day behind a fresh extract is never "fresh").
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { StatusReport, StreamGroupStatus } from './collect.js';

const HOURS = { m: 1 / 60, h: 1, d: 24 } as const;

/** "26h", "90m", "2d" (a whole or decimal number and a unit) to hours. */
export const Duration = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?[mhd]$/, 'expected a duration such as 26h, 90m or 2d')
  .transform((s) => Number(s.slice(0, -1)) * HOURS[s.slice(-1) as keyof typeof HOURS])
  .refine((h) => h > 0, 'expected a duration above zero');

export const FreshnessOptions = z
  .object({ warnAfterHours: Duration, errorAfterHours: Duration })
  .refine((o) => o.errorAfterHours >= o.warnAfterHours, {
    message: 'must be at least --warn-after',
    path: ['errorAfterHours'],
  });
export type FreshnessOptions = z.infer<typeof FreshnessOptions>;

/** The defaults (src/config/defaults.ts). */
export const DEFAULT_WARN_AFTER = DEFAULTS.status.warnAfter;
export const DEFAULT_ERROR_AFTER = DEFAULTS.status.errorAfter;

export type Level = 'fresh' | 'warn' | 'error';

export interface StreamFreshness extends StreamGroupStatus {
  freshness: Level;
}

export interface Freshness {
  level: Level;
  exitCode: number;
  streams: StreamFreshness[];
  /** The marts' level (fresh when no build has been recorded). */
  marts: Level;
  /** One line naming the stalest stream and group when not fresh. */
  message?: string;
}

const where = (s: StreamGroupStatus) => `${s.stream}${s.group === null ? '' : ` of group ${s.group}`}`;
export const hoursText = (h: number) => (h < 48 ? `${h.toFixed(1)}h` : `${(h / 24).toFixed(1)}d`);
/** A threshold as it was given, near enough: 26h, 90m, 48h. */
export const limitText = (h: number) =>
  Number.isInteger(h) ? `${h}h` : Number.isInteger(h * 60) ? `${h * 60}m` : `${h.toFixed(2)}h`;

/** The marts' level and, when not fresh, why. */
function judgeMarts(report: StatusReport, o: FreshnessOptions): { level: Level; message?: string } {
  const m = report.marts;
  if (!m) return { level: 'fresh' };
  const failed = m.lastAttempt?.outcome === 'error';
  const behind = m.extractsBehind > 0;
  if (!failed && !behind) return { level: 'fresh' };
  const age = m.ageHours;
  const level: Level =
    age === null || age > o.errorAfterHours ? 'error' : age > o.warnAfterHours || failed ? 'warn' : 'fresh';
  if (level === 'fresh') return { level };
  const built =
    m.lastSuccessAt === null ? 'never built successfully' : `as built ${hoursText(age!)} ago (${m.lastSuccessAt})`;
  const lag = behind ? `, ${m.extractsBehind} extract run${m.extractsBehind === 1 ? '' : 's'} behind the lake` : '';
  const why = failed ? `; the last build failed at ${m.lastAttempt!.at}: ${m.lastAttempt!.error ?? 'see its log'}` : '';
  return {
    level,
    message: `marts and reports are stale: ${built}${lag}${why}; fix it and rerun \`perks build\``,
  };
}

export function judge(report: StatusReport, o: FreshnessOptions): Freshness {
  const streams = report.streams.map((s): StreamFreshness => ({
    ...s,
    freshness:
      s.ageHours === null || s.ageHours > o.errorAfterHours
        ? 'error'
        : s.ageHours > o.warnAfterHours
          ? 'warn'
          : 'fresh',
  }));
  const marts = judgeMarts(report, o);
  if (streams.length === 0)
    return {
      level: 'error',
      exitCode: ExitCode.failed,
      streams,
      marts: marts.level,
      message: `no extract has run into ${report.outDir} yet: run \`perks run\``,
    };
  const rank = { fresh: 0, warn: 1, error: 2 } as const;
  const worst = streams.reduce((a, b) =>
    rank[b.freshness] > rank[a.freshness] ||
    (rank[b.freshness] === rank[a.freshness] && (b.ageHours ?? Infinity) > (a.ageHours ?? Infinity))
      ? b
      : a,
  );
  if (worst.freshness === 'fresh') return withMarts({ level: 'fresh', exitCode: ExitCode.success, streams }, marts);
  const stale = streams.filter((s) => s.freshness !== 'fresh').length;
  const others = stale > 1 ? ` (and ${stale - 1} more stream${stale > 2 ? 's' : ''} or groups)` : '';
  const limit =
    worst.freshness === 'error'
      ? `--error-after ${limitText(o.errorAfterHours)}`
      : `--warn-after ${limitText(o.warnAfterHours)}`;
  const message =
    worst.ageHours === null
      ? `data is stale: ${where(worst)} has never been extracted successfully${others}; look at the last run's manifest and rerun \`perks run\``
      : `data is stale: ${where(worst)} last extracted ${hoursText(worst.ageHours)} ago, past ${limit}${others}; look at the last runs and rerun \`perks run\``;
  return withMarts(
    {
      level: worst.freshness,
      exitCode: worst.freshness === 'error' ? ExitCode.failed : ExitCode.partial,
      streams,
      message,
    },
    marts,
  );
}

const RANK = { fresh: 0, warn: 1, error: 2 } as const;

/** The streams' verdict with the marts': the worse level decides, and both messages are kept. */
function withMarts(streams: Omit<Freshness, 'marts'>, marts: { level: Level; message?: string }): Freshness {
  const level = RANK[marts.level] > RANK[streams.level] ? marts.level : streams.level;
  const message = [streams.message, marts.message].filter(Boolean).join('; ') || undefined;
  return {
    ...streams,
    level,
    exitCode: level === 'error' ? ExitCode.failed : level === 'warn' ? ExitCode.partial : ExitCode.success,
    marts: marts.level,
    ...(message ? { message } : {}),
  };
}
