/**
 * Freshness, as dbt's `source freshness` judges it: each stream and group's last successful extract
 * against two ages. Past --warn-after: warn (exit 4, look at it); past --error-after, or never extracted:
 * error (exit 1, alert). The worst stream and group decides; a failed last run with a recent success is
 * shown, not judged (the age says whether it matters yet).
 */
import { z } from 'zod';
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

/** Defaults: one daily run may be late by two hours before anyone is told; two missed runs are an alert. */
export const DEFAULT_WARN_AFTER = '26h';
export const DEFAULT_ERROR_AFTER = '50h';

export type Level = 'fresh' | 'warn' | 'error';

export interface StreamFreshness extends StreamGroupStatus {
  freshness: Level;
}

export interface Freshness {
  level: Level;
  exitCode: number;
  streams: StreamFreshness[];
  /** One line naming the stalest stream and group when not fresh. */
  message?: string;
}

const where = (s: StreamGroupStatus) => `${s.stream}${s.group === null ? '' : ` of group ${s.group}`}`;
export const hoursText = (h: number) => (h < 48 ? `${h.toFixed(1)}h` : `${(h / 24).toFixed(1)}d`);
/** A threshold as it was given, near enough: 26h, 90m, 48h. */
export const limitText = (h: number) =>
  Number.isInteger(h) ? `${h}h` : Number.isInteger(h * 60) ? `${h * 60}m` : `${h.toFixed(2)}h`;

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
  if (streams.length === 0)
    return {
      level: 'error',
      exitCode: ExitCode.failed,
      streams,
      message: `no extract has run into ${report.outDir} yet: run \`perks run\``,
    };
  const rank = { fresh: 0, warn: 1, error: 2 } as const;
  const worst = streams.reduce((a, b) =>
    rank[b.freshness] > rank[a.freshness] ||
    (rank[b.freshness] === rank[a.freshness] && (b.ageHours ?? Infinity) > (a.ageHours ?? Infinity))
      ? b
      : a,
  );
  if (worst.freshness === 'fresh') return { level: 'fresh', exitCode: ExitCode.success, streams };
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
  return {
    level: worst.freshness,
    exitCode: worst.freshness === 'error' ? ExitCode.failed : ExitCode.partial,
    streams,
    message,
  };
}
