/**
 * The settled-change guard (issue 51). A month past its lookback is final: the lake's figures for it are the
 * ones the report, the close and finance rely on. A re-read of such a month (a deep re-read, a backfill, a full
 * refresh, the re-read before `perks close`) against the wrong API (a staging URL, another sandbox) or an API
 * that briefly lists nothing would replace it with something else entirely. So the windows of a guarded month
 * are paged whole before any is committed, the month is weighed, lake before against API now, per currency,
 * and a change beyond the allowance (DEFAULTS.settledGuard) is held: nothing of the month is applied, unless the
 * operator accepted it (`--accept-changes`).
 */
import type { WindowedStream } from '../../../pipelines/index.js';
import { finalAfter, monthDays } from '../../closes/index.js';
import { DEFAULTS } from '../../config/index.js';
import type { WindowState } from '../state.js';

/** One side of a re-read (the lake before it, or the API now) in one currency. */
export interface Side {
  readonly orders: number;
  /** Exact decimal text, as the lake holds money ("584.14"). */
  readonly recognised_revenue: string;
}

export interface CurrencyChange {
  /** "" for orders without a currency. */
  readonly currency: string;
  readonly before: Side;
  readonly after: Side;
  /**
   * Orders removed, or changed otherwise than by a status out of recognised revenue (a refund, a cancellation),
   * counted in the currency they were in before.
   */
  readonly touched: number;
  /** Recognised revenue those orders moved, each order's move counted positive. */
  readonly moved: string;
}

/** What a re-read of one group's month found, and what the guard made of it. */
export interface MonthChange {
  /** "YYYY-MM" (the group's local month). */
  readonly month: string;
  /** The local days re-read: the first and the day after the last. */
  readonly from: string;
  readonly to: string;
  readonly windows: number;
  /** The month was final before the re-read (its last day plus the lookback was behind the watermark). */
  readonly settled: boolean;
  readonly new: number;
  readonly changed: number;
  readonly removed: number;
  readonly currencies: readonly CurrencyChange[];
  /** Why the guard holds the change (absent: within the allowance). */
  readonly breach?: string;
  /** applied: within the allowance; held: not applied; accepted: beyond the allowance, applied as asked. */
  readonly outcome: 'applied' | 'held' | 'accepted';
}

/**
 * A record's compared values (the JSON text both sides are encoded in) read for the guard: its currency, its
 * recognised revenue in cents (0 when its status is not recognised), and every compared value but the status.
 */
export type Weigher = (encoded: string) => { currency: string; cents: number; rest: string };

/** A window weighed: per currency, the orders and recognised cents of each side, and what moved. */
export interface Weighed {
  readonly before: Map<string, Count>;
  readonly after: Map<string, Count>;
  readonly touched: Map<string, number>;
  readonly moved: Map<string, number>;
  new: number;
  changed: number;
  removed: number;
}
interface Count {
  orders: number;
  cents: number;
}

/** The stream's weigher under the revenue rule's statuses; undefined for a stream without a guard. */
export function weigherOf(def: WindowedStream, statuses: readonly string[]): Weigher | undefined {
  const compare = def.activity?.compare;
  if (!def.guard || !compare) return undefined;
  const [s, c, a] = [def.guard.status, def.guard.currency, def.guard.amount].map((f) => compare.indexOf(f));
  const rule = new Set(statuses);
  return (encoded) => {
    const v = JSON.parse(encoded) as (string | null)[];
    const rest = JSON.stringify(v.filter((_, i) => i !== s));
    return { currency: v[c] ?? '', cents: rule.has(v[s] ?? '') ? toCents(v[a]) : 0, rest };
  };
}

/** Whether the month holding local days of `ym` was final before this pass (the extract's own rule). */
export function settledMonth(ym: string, state: WindowState, lookbackDays: number): boolean {
  return (
    state.watermark !== undefined && state.watermark > finalAfter(monthDays(ym), state.lookbackDays ?? lookbackDays)
  );
}

/**
 * One window: the lake's records (key → encoded values) against those the API listed now. Weighed (`touched`,
 * `moved`): the orders removed, and the orders changed otherwise than by a status that takes them out of
 * recognised revenue (or keeps them out): a refund, a cancellation, a dispute is how a final month
 * legitimately changes (refunds come up to 30 days after the order), counted as changed, never weighed; money or
 * a currency changed, or an order recognised again (a refund undone, a status older than the lake's), are.
 */
export function weighWindow(
  weigh: Weigher,
  landed: ReadonlyMap<string, string>,
  listed: ReadonlyMap<string, string | undefined>,
): Weighed {
  const w = noneWeighed();
  for (const [key, was] of landed) {
    const b = weigh(was);
    count(w.before, b.currency, b.cents);
    const now = listed.get(key);
    if (listed.has(key) && now === was) continue;
    if (!listed.has(key)) {
      w.removed += 1;
      add(w.touched, b.currency, 1);
      add(w.moved, b.currency, Math.abs(b.cents));
      continue;
    }
    w.changed += 1;
    const a = weigh(now!);
    if (a.rest === b.rest && a.cents <= b.cents) continue; // its status only, out of recognised revenue: a refund
    add(w.touched, b.currency, 1);
    if (a.currency === b.currency) add(w.moved, b.currency, Math.abs(a.cents - b.cents));
    else {
      add(w.moved, b.currency, Math.abs(b.cents));
      add(w.moved, a.currency, Math.abs(a.cents));
    }
  }
  for (const [key, now] of listed) {
    const a = weigh(now!);
    count(w.after, a.currency, a.cents);
    if (!landed.has(key)) w.new += 1;
  }
  return w;
}

/** The month's change from its windows' weighings, judged: beyond the allowance (or emptied), held unless `accept`. */
export function judgeMonth(
  month: string,
  windows: readonly { startDay: string; endDay: string }[],
  weighed: readonly Weighed[],
  o: { settled: boolean; accept: boolean },
): MonthChange {
  const sum = mergeWeighed(weighed);
  const currencies = [...new Set([...sum.before.keys(), ...sum.after.keys(), ...sum.moved.keys()])].sort();
  const changes = currencies.map((currency) => ({
    currency,
    before: side(sum.before.get(currency)),
    after: side(sum.after.get(currency)),
    touched: sum.touched.get(currency) ?? 0,
    moved: money(sum.moved.get(currency) ?? 0),
  }));
  const breach = breachOf(changes);
  const days = windows.map((w) => w.startDay).sort();
  return {
    month,
    from: days[0],
    to: windows
      .map((w) => w.endDay)
      .sort()
      .at(-1)!,
    windows: windows.length,
    settled: o.settled,
    new: sum.new,
    changed: sum.changed,
    removed: sum.removed,
    currencies: changes,
    ...(breach ? { breach } : {}),
    outcome: breach ? (o.accept ? 'accepted' : 'held') : 'applied',
  };
}

/** "0 new, 126 changed, 1646 removed" */
export const changeCounts = (m: Pick<MonthChange, 'new' | 'changed' | 'removed'>): string =>
  `${m.new} new, ${m.changed} changed, ${m.removed} removed`;

/** "GBP: orders 1772 → 126, recognised revenue 584.14 → 35.87 (-548.27)" */
export function currencyLine(c: CurrencyChange): string {
  const delta = toCents(c.after.recognised_revenue) - toCents(c.before.recognised_revenue);
  return (
    `${c.currency || '(no currency)'}: orders ${c.before.orders} → ${c.after.orders}, ` +
    `recognised revenue ${c.before.recognised_revenue} → ${c.after.recognised_revenue} (${delta > 0 ? '+' : ''}${money(delta)})`
  );
}

/** One line of a run's summary for a month weighed: its state, what was done, its counts and currencies. */
export function monthLine(m: MonthChange): string {
  const done = {
    applied: 'applied',
    held: 'HELD, not applied',
    accepted: 'beyond the guard, applied (--accept-changes)',
  };
  return (
    `${m.month} (${m.settled ? 'final' : 'not final'}, ${m.windows} days re-read) ${done[m.outcome]}: ` +
    `${changeCounts(m)}; ${m.currencies.map(currencyLine).join('; ') || 'no orders'}`
  );
}

/** The allowance, as the summary and the docs say it. */
export const allowanceText = (): string =>
  `more than ${DEFAULTS.settledGuard.orders} orders removed or changed (a refund or a cancellation aside) and more` +
  ` than ${pct(DEFAULTS.settledGuard.revenueShare)} of the recognised revenue moved in one currency, or no order left`;

/** Why the change is beyond the allowance, or undefined. */
function breachOf(changes: readonly CurrencyChange[]): string | undefined {
  const before = changes.reduce((n, c) => n + c.before.orders, 0);
  const after = changes.reduce((n, c) => n + c.after.orders, 0);
  if (before > 0 && after === 0) return `the API lists none of its ${before} orders`;
  const { orders, revenueShare } = DEFAULTS.settledGuard;
  const over = changes.filter(
    (c) => c.touched > orders && toCents(c.moved) > revenueShare * toCents(c.before.recognised_revenue),
  );
  if (!over.length) return undefined;
  return over
    .map((c) => {
      const base = toCents(c.before.recognised_revenue);
      const share = base > 0 ? ` (${pct(toCents(c.moved) / base)})` : '';
      return (
        `${c.currency || 'no currency'}: ${c.touched} of ${c.before.orders} orders removed or changed, ` +
        `${c.moved} of ${c.before.recognised_revenue} recognised revenue moved${share}`
      );
    })
    .join('; ');
}

const noneWeighed = (): Weighed => ({
  before: new Map(),
  after: new Map(),
  touched: new Map(),
  moved: new Map(),
  new: 0,
  changed: 0,
  removed: 0,
});

function mergeWeighed(all: readonly Weighed[]): Weighed {
  const sum = noneWeighed();
  for (const w of all) {
    for (const [c, n] of w.before) count(sum.before, c, n.cents, n.orders);
    for (const [c, n] of w.after) count(sum.after, c, n.cents, n.orders);
    for (const [c, n] of w.touched) add(sum.touched, c, n);
    for (const [c, n] of w.moved) add(sum.moved, c, n);
    sum.new += w.new;
    sum.changed += w.changed;
    sum.removed += w.removed;
  }
  return sum;
}

const side = (c: Count | undefined): Side => ({ orders: c?.orders ?? 0, recognised_revenue: money(c?.cents ?? 0) });

function count(m: Map<string, Count>, currency: string, cents: number, orders = 1): void {
  const c = m.get(currency) ?? { orders: 0, cents: 0 };
  c.orders += orders;
  c.cents += cents;
  m.set(currency, c);
}

function add(m: Map<string, number>, key: string, n: number): void {
  m.set(key, (m.get(key) ?? 0) + n);
}

/** "12.50" → 1250 (money has two decimals in the lake); null → 0. */
export function toCents(value: string | null | undefined): number {
  return value === null || value === undefined || value === '' ? 0 : Math.round(Number(value) * 100);
}

/** 1250 → "12.50", exactly. */
export function money(cents: number): string {
  const a = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`;
}

const pct = (share: number) => `${(share * 100).toFixed(1).replace(/\.0$/, '')}%`;
