/**
 * The extract's own settings that have no key in src/config yet: the per-user refresh interval and the
 * quarantine threshold. Each is read from the environment (PERKS_REFRESH_DAYS,
 * PERKS_QUARANTINE_THRESHOLD) and overridden by its `perks extract` flag; a bad value is one line, exit 2.
 */
import { z } from 'zod';
import { ConfigError } from '../shared/exit-codes.js';

const refreshDays = z.coerce.number().int().min(1).max(3650);
const threshold = z.coerce.number().min(0).max(1);

export interface ExtractSettings {
  /** Every user is refreshed at least every N days (the run's maxAgeDays). */
  maxAgeDays?: number;
  quarantineThreshold?: number;
}

/** The settings of the environment, overridden by the flags; undefined where neither says. */
export function extractSettings(env: NodeJS.ProcessEnv, flags: { refreshDays?: unknown; quarantineThreshold?: unknown } = {}): ExtractSettings {
  return {
    maxAgeDays: read(refreshDays, flags.refreshDays, '--refresh-days', env.PERKS_REFRESH_DAYS, 'PERKS_REFRESH_DAYS', 'a whole number of days, 1 or more (default 7)'),
    quarantineThreshold: read(threshold, flags.quarantineThreshold, '--quarantine-threshold', env.PERKS_QUARANTINE_THRESHOLD, 'PERKS_QUARANTINE_THRESHOLD', 'a fraction from 0 to 1, e.g. 0.001 for 0.1% (the default)'),
  };
}

function read(schema: z.ZodType<number>, flag: unknown, flagName: string, envValue: string | undefined, envName: string, expected: string): number | undefined {
  const [name, value] = flag !== undefined ? [flagName, flag] : [envName, envValue];
  if (value === undefined || (typeof value === 'string' && value.trim() === '' && name === envName)) return undefined;
  const parsed = schema.safeParse(typeof value === 'string' ? value.trim() || 'x' : value);
  if (!parsed.success) throw new ConfigError(`${name}=${JSON.stringify(value)} is invalid: expected ${expected}`);
  return parsed.data;
}
