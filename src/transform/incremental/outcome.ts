/**
 * What building a model incrementally (incremental.ts, by-user.ts) says of it: its rows, how many intervals (or
 * users) were rebuilt and kept, or why it was built whole; and the summary's line of that.
 */

export interface IntervalCounts {
  /** Group-months rebuilt (all of them when built whole), counted over the intervals its inputs hold. */
  rebuilt: number;
  /**
   * Group-months of its inputs not rebuilt. Inputs may hold more months than the model: `stg_month_states` has a
   * row for every month since 2000, so these are not the model's months (`months` is).
   */
  skipped: number;
  /** The months the model holds once built (any group; rows of no month not counted): what the summary says. */
  months?: number;
  /** Why the model was built whole; absent when built by intervals. */
  whole?: string;
  /** A model built by users (by-user.ts): `rebuilt` counts users, `skipped` none (the rest are not counted). */
  unit?: 'users';
}

export interface IncrementalOutcome {
  rows: number;
  intervals: IntervalCounts;
}

const monthsText = (n: number) => `${n} month${n === 1 ? '' : 's'}`;

/**
 * `savings_monthly: built whole, 4 months (why)`, `stg_orders: 3 group-months rebuilt, the rest of its 4 months
 * kept`, or `stg_orders: nothing rebuilt, its 4 months kept`: the months are those the model holds.
 */
export function describeIntervals(model: string, i: IntervalCounts): string {
  if (i.unit === 'users') {
    if (i.whole) return `${model}: built whole (${i.whole})`;
    if (i.rebuilt === 0) return `${model}: nothing rebuilt, every user's rows kept`;
    return `${model}: ${i.rebuilt} user${i.rebuilt === 1 ? '' : 's'} rebuilt, the other users' rows kept`;
  }
  const held = monthsText(i.months ?? 0);
  if (i.whole) return `${model}: built whole, ${held} (${i.whole})`;
  if (i.rebuilt === 0) return `${model}: nothing rebuilt, its ${held} kept`;
  return `${model}: ${i.rebuilt} group-month${i.rebuilt === 1 ? '' : 's'} rebuilt, the rest of its ${held} kept`;
}
