/**
 * What a run changed in business terms, from what it already has (no call): the orders its extract found new
 * or changed (the order history rows stamped with its run id), the users its users snapshots found joined or
 * anonymised (the extract's tallies), and the recognised revenue per group, month and currency before and after
 * its build (a small aggregate of revenue_monthly read from the warehouse on each side of the build).
 */
import type { ExtractResult } from '../extract/index.js';
import { scanSql, streamGlob, withLakeConnection } from '../lake/index.js';
import { openWarehouse } from '../report/index.js';

/** Lines of moved revenue the summary names (the rest are counted). */
export const TOP_MOVES = 5;

export interface RevenueMove {
  readonly group: number;
  /** YYYY-MM */
  readonly month: string;
  /** The orders' currency ('' when the orders had none). */
  readonly currency: string;
  /** Exact decimal strings; null before: the group had no such month and currency before this run. */
  readonly before: string | null;
  readonly after: string;
  readonly change: string;
  /**
   * The month is signed off (`perks close`) in the build after the run: the move is an adjustment, what finance
   * signed stays the month's figure (revenue_adjustments lists it); the summary says so beside the move.
   */
  readonly signedOff: boolean;
}

export interface RunChanges {
  /** null: the order history could not be read (the count is unknown, not zero). */
  orders?: { new: number; changed: number } | null;
  users?: { joined: number; anonymised: number };
  /** Recognised revenue that moved, the largest moves first: the first TOP_MOVES, and how many more. */
  revenue?: { moves: RevenueMove[]; more: number };
}

/** The order history as this run left it (partition values as text, as the close's re-read reads it). */
const HISTORY = scanSql('$glob', { unionByName: false, autocast: false });

/** Orders of this run's history rows: new (no earlier observation) or changed; null when unreadable. */
export async function orderChanges(outDir: string, runId: string): Promise<RunChanges['orders']> {
  try {
    return await withLakeConnection(async (c) => {
      // an order's observations share its order_date: earlier ones are looked for from this run's first day on
      const r = await c.runAndReadAll(
        `WITH h AS (SELECT organisation_group_id AS g, order_id, order_date, _run_id FROM ${HISTORY}),
        now AS (SELECT DISTINCT g, order_id, order_date FROM h WHERE _run_id = $run),
        earlier AS (SELECT DISTINCT g, order_id FROM h SEMI JOIN now USING (g, order_id)
          WHERE h._run_id <> $run AND h.order_date >= (SELECT min(order_date) FROM now))
        SELECT count(*) FILTER (WHERE earlier.g IS NULL) AS new, count(earlier.g) AS changed
        FROM (SELECT DISTINCT g, order_id FROM now) AS n LEFT JOIN earlier USING (g, order_id)`,
        { glob: streamGlob(outDir, 'order_versions'), run: runId },
      );
      const row = r.getRowObjectsJS()[0];
      return { new: Number(row.new), changed: Number(row.changed) };
    });
  } catch (err) {
    if (/No files found/i.test((err as Error).message)) return { new: 0, changed: 0 }; // no order history yet
    return null;
  }
}

/** The users' changes the extract's users snapshots recorded, over every group. */
export function userChanges(extract: ExtractResult): RunChanges['users'] {
  const tallies = extract.streams.filter((s) => s.name === 'users').flatMap((s) => s.groups);
  const count = (kind: string) => tallies.reduce((n, t) => n + (t.changes?.[kind] ?? 0), 0);
  return { joined: count('joined'), anonymised: count('anonymised') };
}

/**
 * Recognised revenue per group, month and currency in the warehouse, keyed `group|month|currency`, and whether
 * the month is signed off.
 */
export type RevenueTotals = Map<string, { revenue: string; signedOff: boolean }>;

/** The warehouse's recognised revenue totals; null when there is no readable warehouse (a first build) or mart. */
export async function revenueTotals(outDir: string): Promise<RevenueTotals | null> {
  let wh: Awaited<ReturnType<typeof openWarehouse>>;
  try {
    wh = await openWarehouse(outDir);
  } catch {
    return null;
  }
  try {
    const rows = await wh.all(
      `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS m, coalesce(order_currency, '') AS c,
        CAST(coalesce(sum(group_revenue) FILTER (WHERE is_recognised), 0) AS VARCHAR) AS revenue,
        bool_or(is_closed) AS signed_off
      FROM revenue_monthly GROUP BY ALL`,
    );
    return new Map(
      rows.map((r) => [`${r.g}|${r.m}|${r.c}`, { revenue: String(r.revenue), signedOff: r.signed_off === true }]),
    );
  } catch {
    return null; // a warehouse of another shape: the summary says nothing of revenue rather than fail the run
  } finally {
    wh.close();
  }
}

/** The totals that moved between two builds, the largest change first (then group, month, currency). */
export function revenueMoves(before: RevenueTotals | null, after: RevenueTotals): RunChanges['revenue'] {
  const moved: (RevenueMove & { size: bigint })[] = [];
  for (const key of new Set([...(before?.keys() ?? []), ...after.keys()])) {
    const [g, month, currency] = key.split('|');
    const was = before?.get(key)?.revenue ?? null;
    const now = after.get(key)?.revenue ?? '0';
    const change = minus(now, was ?? '0');
    if (was !== null && change.units === 0n) continue;
    const size = change.units < 0n ? -change.units : change.units;
    const signedOff = after.get(key)?.signedOff ?? before?.get(key)?.signedOff ?? false;
    moved.push({ group: Number(g), month, currency, before: was, after: now, change: change.text, signedOff, size });
  }
  moved.sort((a, b) =>
    a.size !== b.size
      ? Number(b.size - a.size)
      : a.group - b.group || a.month.localeCompare(b.month) || a.currency.localeCompare(b.currency),
  );
  const moves = moved.slice(0, TOP_MOVES).map(({ size: _size, ...m }) => m);
  return { moves, more: moved.length - moves.length };
}

/** a − b of two exact decimal strings, in the larger of their scales; `text` signed ("+12.50", "-3.00"). */
function minus(a: string, b: string): { units: bigint; text: string } {
  const scale = Math.max(decimals(a), decimals(b));
  const units = unitsOf(a, scale) - unitsOf(b, scale);
  const abs = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const digits = scale ? `${abs.slice(0, -scale)}.${abs.slice(-scale)}` : abs;
  return { units, text: `${units < 0n ? '-' : '+'}${digits}` };
}

const decimals = (s: string) => (s.includes('.') ? s.length - s.indexOf('.') - 1 : 0);

function unitsOf(s: string, scale: number): bigint {
  const negative = s.startsWith('-');
  const [whole, fraction = ''] = s.replace(/^[-+]/, '').split('.');
  const units = BigInt(`${whole || '0'}${fraction.padEnd(scale, '0')}`);
  return negative ? -units : units;
}
