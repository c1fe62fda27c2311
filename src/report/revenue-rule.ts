/**
 * Which order statuses are revenue: the organisation's rule, not the API's (the spec shows only Complete).
 * `PERKS_REVENUE_STATUSES` (comma-separated, default Complete) names them. The build applies it (the marts'
 * is_recognised) and the report sums the rows the mart flags, after checking the mart was built under this rule;
 * here the rule is only said, and used to name a status the API sends that is neither in it nor among the
 * statuses known to this project (never silently counted).
 */
import { revenueStatusesFrom } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { ReportInputError } from './errors.js';

/** The statuses the project knows the API to send (the spec shows Complete; the others are observed). */
export const KNOWN_STATUSES = ['Complete', 'Pending', 'Cancelled', 'Refunded'] as const;

export interface RevenueRule {
  /** Statuses counted as recognised revenue, as the API spells them. */
  readonly statuses: readonly string[];
}

/** Parses PERKS_REVENUE_STATUSES (absent: Complete; src/config). A blank entry is refused, exit 2. */
export function revenueRuleFrom(env: Record<string, string | undefined>): RevenueRule {
  try {
    return { statuses: revenueStatusesFrom(env) };
  } catch (err) {
    throw err instanceof ConfigError ? new ReportInputError(err.message) : err;
  }
}

export function isKnownStatus(status: string, rule: RevenueRule): boolean {
  return (KNOWN_STATUSES as readonly string[]).includes(status) || rule.statuses.includes(status);
}

/** "Complete" / "Complete and Pending" / "Complete, Pending and Refunded". */
export function ruleSentence(rule: RevenueRule): string {
  const s = rule.statuses;
  const list = s.length === 1 ? s[0] : `${s.slice(0, -1).join(', ')} and ${s.at(-1)}`;
  return `Recognised revenue counts orders whose status is ${list} (PERKS_REVENUE_STATUSES); every other status is shown apart and never added to it.`;
}
