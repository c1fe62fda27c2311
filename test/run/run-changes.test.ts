/**
 * The run summary says what changed in business terms: a run, the sandbox a day on (new orders and users,
 * statuses settled, users anonymised), a second run; its figures are checked against the output itself: the
 * orders of the warehouse and the recognised revenue of marts/revenue_monthly.parquet on each side of it.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Event } from '../../src/extract/index.js';
import { formatRunSummary, markdownSummary, runPipeline, type RunSummary } from '../../src/run/index.js';
import { revenueMoves } from '../../src/run/changes.js';
import { changesLines } from '../../src/run/changes-text.js';
import { atInstant } from '../support/clock.js';
import { orgConfig } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { query, type Row } from '../transform/helpers.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const sandbox = sandboxForFile({ today: TODAY });

/** A run at `at`, and the last event it emitted (the JSON lines of its progress off a terminal). */
async function run(dir: string, at: string): Promise<RunSummary & { lastEvent?: Event }> {
  const config = orgConfig(sandbox(), dir, { PERKS_START_DATE: '2026-10-25' });
  let lastEvent: Event | undefined;
  const emit = (e: Event) => (lastEvent = e);
  const summary = await atInstant(at, () =>
    runPipeline(config, { output: outputAt(dir), writeback: false, now: new Date(at), emit }),
  );
  expect(summary.exitCode, formatRunSummary(summary)).toBe(0);
  return { ...summary, lastEvent };
}

/** Every current order with the values a new version is made of, by group and id. */
async function orders(dir: string): Promise<Map<string, string>> {
  const rows = await query(
    join(dir, 'warehouse.duckdb'),
    `SELECT organisation_group_id AS g, order_id AS o, concat_ws('|', order_status, order_currency, face_value,
       order_total_paid, order_credit, order_saving, group_revenue) AS v FROM stg_orders`,
  );
  return new Map(rows.map((r) => [`${r.g}/${r.o}`, String(r.v)]));
}

/** Recognised revenue that moved between two copies of the mart, largest change first, as the summary orders it. */
async function movesBetween(before: string | null, after: string): Promise<Row[]> {
  const totals = (file: string) =>
    `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS m, coalesce(order_currency, '') AS c,
       coalesce(sum(group_revenue) FILTER (WHERE is_recognised), 0) AS r, bool_or(is_closed) AS s
     FROM read_parquet('${file}') GROUP BY ALL`;
  return query(
    ':memory:',
    `WITH a AS (${totals(after)}), b AS (${before ? totals(before) : 'SELECT * FROM a WHERE false'})
     SELECT g, m, c, b.r::VARCHAR AS before, coalesce(a.r, 0)::VARCHAR AS after, coalesce(a.r, 0) - coalesce(b.r, 0) AS d,
       coalesce(a.s, b.s, false) AS signed_off
     FROM a FULL JOIN b USING (g, m, c) WHERE b.r IS NULL OR d <> 0
     ORDER BY abs(d) DESC, g, m, c`,
  );
}

/** The summary's revenue figures the rows say: the first five moves, and how many more. */
function expectedRevenue(moved: Row[]) {
  const moves = moved.slice(0, 5).map((r) => ({
    group: Number(r.g),
    month: r.m,
    currency: r.c,
    before: r.before,
    after: r.after,
    change: `${String(r.d).startsWith('-') ? '' : '+'}${r.d}`,
    signedOff: r.signed_off,
  }));
  return { moves, more: moved.length - moves.length };
}

describe('the run summary says what changed', () => {
  test('a second run a day later: new and changed orders, users joined and anonymised, recognised revenue moved', async () => {
    const dir = tempOut('perks-run-changes-');
    const first = await run(dir, `${TODAY}T12:00:00Z`);
    // a first run: every total is new (the largest five named, the rest counted), and there was no earlier
    // snapshot of users to compare with
    const created = await movesBetween(null, join(dir, 'marts', 'revenue_monthly.parquet'));
    expect(created.length).toBeGreaterThan(5);
    expect(first.changes?.revenue).toEqual(expectedRevenue(created));
    expect(formatRunSummary(first)).toContain(`\n    and ${created.length - 5} more\n`);
    expect(first.changes?.users).toEqual({ joined: 0, anonymised: 0 });
    const ordersBefore = await orders(dir);
    const martBefore = join(dir, 'revenue_monthly-before.parquet');
    copyFileSync(join(dir, 'marts', 'revenue_monthly.parquet'), martBefore);

    const day = sandbox().advance(1);
    const second = await run(dir, '2026-11-23T12:00:00Z');
    const ordersAfter = await orders(dir);
    const added = [...ordersAfter.keys()].filter((k) => !ordersBefore.has(k)).length;
    const changed = [...ordersBefore].filter(([k, v]) => ordersAfter.get(k) !== v).length; // changed or gone
    expect(added).toBeGreaterThan(0);
    expect(changed).toBeGreaterThan(0);
    expect(second.changes?.orders).toEqual({ new: added, changed });
    expect(second.changes?.users).toEqual({ joined: day.newUsers.length, anonymised: day.anonymised.length });
    expect(day.anonymised.length).toBeGreaterThan(0);

    const moved = await movesBetween(martBefore, join(dir, 'marts', 'revenue_monthly.parquet'));
    expect(moved.length).toBeGreaterThan(0);
    expect(second.changes?.revenue).toEqual(expectedRevenue(moved));

    // the same figures in the text the run prints, the CI's Markdown and the summary as JSON
    const text = formatRunSummary(second);
    const [m] = expectedRevenue(moved).moves;
    expect(text).toContain(
      `\nchanges:\n  orders   ${added} new, ${changed} changed\n  users    ${day.newUsers.length} joined, ${day.anonymised.length} anonymised (since the last users snapshot)\n  revenue  recognised revenue moved in ${moved.length} group-month${moved.length === 1 ? '' : 's'} (currency of the orders):\n    group ${m.group} ${m.month} ${m.currency} ${m.before} → ${m.after} (${m.change})\n`,
    );
    expect(markdownSummary(second)).toContain(`- orders ${added} new, ${changed} changed\n`);
    expect(JSON.parse(JSON.stringify(second.lastEvent))).toEqual({ event: 'run_changes', ...second.changes });
  }, 300_000);
});

test('a move in a signed-off month is named an adjustment: the signed-off figure stands', () => {
  const totals = (revenue: string, signedOff: boolean) => new Map([['11|2026-10|GBP', { revenue, signedOff }]]);
  const revenue = revenueMoves(totals('1200.00', true), totals('1265.50', true));
  expect(revenue).toEqual({
    moves: [
      {
        group: 11,
        month: '2026-10',
        currency: 'GBP',
        before: '1200.00',
        after: '1265.50',
        change: '+65.50',
        signedOff: true,
      },
    ],
    more: 0,
  });
  const open = revenueMoves(totals('1200.00', false), totals('1199.00', false));
  const text = (r: typeof revenue) => changesLines({ revenue: r }).join('\n') + '\n';
  expect(text(revenue)).toContain(
    'group 11 2026-10 GBP 1200.00 → 1265.50 (+65.50) SIGNED OFF: an adjustment, the signed-off figure stands (revenue_adjustments)',
  );
  expect(text(open)).toContain('group 11 2026-10 GBP 1200.00 → 1199.00 (-1.00)\n');
});
