/**
 * PERKS_REVENUE_STATUSES: the order statuses that are recognised revenue (comma-separated, default Complete).
 * One parser for every reader: the build computes the marts' `is_recognised` from it, the report checks the
 * warehouse agrees with it. A blank entry is refused; a status name cannot hold a comma.
 */
import { ConfigError } from '../shared/exit-codes.js';
import { DEFAULTS } from './defaults.js';

export const REVENUE_STATUSES_MESSAGE = 'expected comma-separated order statuses, e.g. Complete or Complete,Pending';

export function splitStatuses(raw: string): string[] {
  return raw.split(',').map((s) => s.trim());
}

/** The statuses from an environment-like record (ConfigSchema's field reads the same way). */
export function revenueStatusesFrom(env: Record<string, string | undefined>): readonly string[] {
  const raw = env.PERKS_REVENUE_STATUSES;
  if (raw === undefined) return [...DEFAULTS.revenueStatuses];
  const statuses = splitStatuses(raw);
  if (statuses.some((s) => s === '')) {
    throw new ConfigError(`PERKS_REVENUE_STATUSES=${JSON.stringify(raw)} is invalid: ${REVENUE_STATUSES_MESSAGE}`);
  }
  return [...new Set(statuses)];
}
