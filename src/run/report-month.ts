/**
 * `perks run --month M` judged before the run's first call: a month this run's data cannot hold (after its day,
 * or before where its extract starts) would otherwise be refused by the report step, after a whole extract and
 * build. Lenient at both ends (a zone a day ahead, a group starting a day earlier): the report step still judges
 * the month exactly.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { stateRoot } from '../lake/index.js';
import { InputError } from '../shared/exit-codes.js';
import { camelKeys } from '../shared/json-keys.js';

/** The first local day the extract's state of orders records, over every group (undefined: none yet). */
function firstExtractedDay(outDir: string): string | undefined {
  const dir = join(stateRoot(outDir), 'orders');
  let first: string | undefined;
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return undefined; // no extract yet
  }
  for (const f of files) {
    try {
      const day = (camelKeys(JSON.parse(readFileSync(join(dir, f), 'utf8'))) as { firstDay?: unknown }).firstDay;
      if (typeof day === 'string' && (first === undefined || day < first)) first = day;
    } catch {
      // a state the extract itself refuses, naming it: not this check's to judge
    }
  }
  return first;
}

const dayOf = (at: Date, days: number) => new Date(at.getTime() + days * 86_400_000).toISOString().slice(0, 10);

export function checkReportMonth(
  outDir: string,
  config: Config,
  options: { month?: string; startDate?: string },
  startedAt: Date,
): void {
  const month = options.month;
  if (month === undefined) return;
  const latest = dayOf(startedAt, 1).slice(0, 7); // the day in the zone furthest ahead
  if (month > latest)
    throw new InputError(
      `--month=${month} is after this run's day (${startedAt.toISOString().slice(0, 10)}): nothing of it is extracted yet; give a month up to ${latest}`,
    );
  // where this run's data starts: the earliest of the state's first day, the run's own start date, and where a
  // first extract starts (PERKS_START_DATE, else 90 days back)
  const starts = [firstExtractedDay(outDir), options.startDate, config.startDate ?? dayOf(startedAt, -91)].filter(
    (d): d is string => d !== undefined,
  );
  const first = starts.sort()[0].slice(0, 7);
  if (month < first)
    throw new InputError(
      `--month=${month} is before this run's data starts (${first}): ` +
        `extract it first with \`perks extract --start-date ${month}-01\`, or give a month from ${first}`,
    );
}
