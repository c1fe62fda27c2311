/**
 * What finance signs cannot be wrong by accident (issue 51): a re-read that would remove or change more of a
 * final month than the settled-change guard allows is held, not applied: `perks close` stops (exit 2) with the
 * figures before and after and the command that accepts them, `perks extract` holds the month (exit 4) and names
 * the one command that applies it; a real late cancellation passes. And `perks close --group` re-reads and
 * refreshes that group only: nothing of another group changes.
 *
 * September 2026 is read on 20 September (orders, users, credit), the sandbox moves to 22 November, the orders
 * from September on are read again and built: September is final, its credit balances older than its end.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { atInstant } from '../support/clock.js';
import { filesUnder } from '../support/files.js';
import { orgConfig, orgEnv, testSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { completeOrders, TODAY } from './scenario.js';
import { outputAt } from '../../src/output/index.js';

const READ_DAY = '2026-09-20';
const SEPTEMBER = '2026-09';
const GROUP = 11;

let sandbox: Sandbox;
let base: string;

/** A copy of the scenario's output, for one test to change. */
function copyOfBase(): string {
  const dir = tempOut('perks-guard-');
  cpSync(base, dir, { recursive: true });
  return dir;
}

/** sha256 of every file under `dir`'s `folder` whose path passes `keep`, by path. */
function fingerprint(dir: string, folder: string, keep: (path: string) => boolean = () => true) {
  return Object.fromEntries(
    filesUnder(join(dir, folder))
      .filter(keep)
      .map((f) => [
        f,
        createHash('sha256')
          .update(readFileSync(join(dir, folder, f)))
          .digest('hex'),
      ]),
  );
}

/** September of `group` in the warehouse, per currency: every order, and recognised revenue (the report's rule). */
async function septemberOf(dir: string, group = GROUP) {
  const rows = await query(
    join(dir, 'warehouse.duckdb'),
    `SELECT order_currency AS currency, sum(orders)::BIGINT AS orders,
       CAST(coalesce(sum(group_revenue) FILTER (WHERE is_recognised), 0) AS DECIMAL(18,2)) AS recognised
     FROM revenue_monthly WHERE organisation_group_id = ${group} AND month = DATE '${SEPTEMBER}-01'
     GROUP BY ALL ORDER BY ALL`,
  );
  return rows.map((r) => ({
    currency: String(r.currency),
    orders: Number(r.orders),
    recognised: String(r.recognised),
  }));
}

/** Every mart's rows of the groups other than `group` (a mart without groups: all its rows), as sorted JSON. */
async function otherGroupsInMarts(dir: string, group = GROUP): Promise<Record<string, string>> {
  const marts: Record<string, string> = {};
  const files = filesUnder(join(dir, 'marts')).filter((f) => f.endsWith('.parquet'));
  await withLakeConnection(async (c) => {
    for (const f of files) {
      const path = join(dir, 'marts', f);
      const columns = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet($p)`, { p: path }))
        .getRowObjectsJS()
        .map((r) => r.column_name as string);
      const where = columns.includes('organisation_group_id') ? `WHERE organisation_group_id <> ${group}` : '';
      const r = await c.runAndReadAll(
        `SELECT to_json(t)::VARCHAR AS j FROM (SELECT * FROM read_parquet($p) ${where}) t ORDER BY 1`,
        { p: path },
      );
      marts[f] = JSON.stringify(r.getRowObjectsJS().map((x) => x.j));
    }
  });
  return marts;
}

/**
 * The group's orders and order history in the lake, every row as JSON (keys sorted), sorted: the same rows
 * whatever files hold them, in whatever column order (`perks extract` compacts final months into month files).
 */
async function lakeOfGroup(dir: string, before = '9999-12-31'): Promise<Record<'orders' | 'order_versions', string[]>> {
  const rows = async (stream: string) =>
    (
      await query(
        ':memory:',
        `SELECT to_json(t)::VARCHAR AS j FROM read_parquet('${join(dir, 'lake', stream)}/**/*.parquet', hive_partitioning = true, union_by_name = true) t
         WHERE organisation_group_id = ${GROUP} AND order_date < DATE '${before}' ORDER BY 1`,
      )
    )
      .map((r) => JSON.parse(String(r.j)) as Record<string, unknown>)
      .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).sort(([a], [b]) => (a < b ? -1 : 1)))))
      .sort();
  return { orders: await rows('orders'), order_versions: await rows('order_versions') };
}

/** "584.14" − cents, exactly. */
const minus = (money: string, cents: number) => {
  const v = Math.round(Number(money) * 100) - cents;
  return `${v < 0 ? '-' : ''}${Math.floor(Math.abs(v) / 100)}.${String(Math.abs(v) % 100).padStart(2, '0')}`;
};

const closeEnv = (s: Sandbox, dir: string) => ({ ...orgEnv(s, dir), PERKS_OPERATOR: 'ci' });

beforeAll(async () => {
  sandbox = await testSandbox({ today: READ_DAY });
  base = tempOut('perks-guard-base-');
  const config = (day: string) =>
    orgConfig(sandbox, base, { PERKS_START_DATE: '2026-09-01', PERKS_NOW: `${day}T12:00:00Z` });
  const first = await atInstant(`${READ_DAY}T12:00:00Z`, () =>
    extract(config(READ_DAY), {
      output: outputAt(base),
      now: new Date(`${READ_DAY}T12:00:00Z`),
      streams: ['orders', 'users', 'credit'],
    }),
  );
  expect(first.status).toBe('success');
  sandbox.advance(63);
  expect(sandbox.world.today).toBe(TODAY);
  const daily = await atInstant(`${TODAY}T12:00:00Z`, () =>
    // from September on: the lake holds every order as the API lists it today (the weeks' refunds included)
    extract(config(TODAY), {
      output: outputAt(base),
      now: new Date(`${TODAY}T12:00:00Z`),
      streams: ['orders'],
      startDate: '2026-09-01',
    }),
  );
  expect(daily.status).toBe('success');
  const built = await buildWarehouse({ output: outputAt(base), asOf: TODAY });
  expect(built.ok, built.error).toBe(true);
}, 300_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('a close stops a mass change', () => {
  test('the wrong API (another sandbox) is refused, exit 2, with the figures before and after, nothing changed; --accept-changes closes and the record keeps what it accepted', async () => {
    const dir = copyOfBase();
    const before = await septemberOf(dir);
    const kept = () => ({
      orders: fingerprint(dir, 'lake', (f) => /^(orders|order_versions)\//.test(f)),
      marts: fingerprint(dir, 'marts'),
      reports: fingerprint(dir, 'reports'),
      warehouse: fingerprint(dir, '.', (f) => f === 'warehouse.duckdb'),
    });
    const untouched = kept();
    const wrong = await testSandbox({ today: TODAY, seed: 8 }); // `perks sandbox --seed 8`: the wrong API
    try {
      const held = await runCli(['close', '--month', SEPTEMBER, '--group', String(GROUP)], closeEnv(wrong, dir));
      expect(held.code, held.stderr).toBe(2);
      expect(stderrLines(held)).toHaveLength(1);
      expect(held.stderr).toMatch(
        new RegExp(
          `^perks: ${SEPTEMBER} is not closed: its re-read would change more than the guard allows \\(more than 20 orders removed or changed \\(a refund or a cancellation aside\\) and more than 2% of the recognised revenue moved in one currency, or no order left\\): group ${GROUP} \\(.+\\); that re-read was not applied, and the close record and the marts are unchanged\\. .*\`perks close --month ${SEPTEMBER} --group ${GROUP} --accept-changes\``,
        ),
      );
      // the figures before (the warehouse's) and after (the other API's), per currency
      expect(held.stdout).toMatch(
        new RegExp(
          `^re-read ${SEPTEMBER}: HELD, not applied; the lake before → the API now:\\n  group ${GROUP} \\(30 days re-read\\): \\d+ new, \\d+ changed, \\d+ removed\\n`,
        ),
      );
      for (const c of before)
        expect(held.stdout).toMatch(
          new RegExp(
            `\\n    ${c.currency}: orders ${c.orders} → \\d+, recognised revenue ${c.recognised} → [\\d.]+ \\(`,
          ),
        );
      expect(existsSync(join(dir, 'closes', 'closes.jsonl'))).toBe(false);
      expect(kept()).toEqual(untouched);

      const accepted = await runCli(
        // --force too: the other API does not know this lake's credit holders, so their balances stay stale
        ['close', '--month', SEPTEMBER, '--group', String(GROUP), '--accept-changes', '--force'],
        closeEnv(wrong, dir),
      );
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(accepted.stdout).toContain('beyond the guard, accepted (--accept-changes)');
      const record = JSON.parse(readFileSync(join(dir, 'closes', 'closes.jsonl'), 'utf8'));
      const after = await septemberOf(dir);
      expect(record.figures.reread.accepted_changes).toEqual({
        breach: expect.stringMatching(/orders removed or changed/),
        allowance: expect.stringMatching(/^more than 20 orders/),
      });
      // the record keeps the figures it accepted: the lake before, and what the warehouse holds now
      const currencies = record.figures.reread.currencies as {
        currency: string;
        before: { orders: number; recognised_revenue: string };
        after: { orders: number; recognised_revenue: string };
      }[];
      const sideOf = (rows: typeof before, currency: string) => {
        const r = rows.find((x) => x.currency === currency);
        return { orders: r?.orders ?? 0, recognised_revenue: r?.recognised ?? '0.00' };
      };
      for (const c of currencies) {
        expect(c.before).toEqual(sideOf(before, c.currency));
        expect(c.after).toEqual(sideOf(after, c.currency));
      }
      expect(currencies.map((c) => c.currency).sort()).toEqual(
        [...new Set([...before, ...after].map((c) => c.currency))].sort(),
      );
    } finally {
      await wrong.close();
    }
  }, 300_000);
});

describe('a real late cancellation passes, and --group means that group', () => {
  test('close --group 11 re-reads its 30 windows and refreshes its holders only: the cancellation is in the signed figures, and nothing of another group changes', async () => {
    const dir = copyOfBase();
    const before = await septemberOf(dir);
    // every other group's lake files (the lake-wide bookkeeping, _compaction.json and the schema history, aside)
    const others = (path: string) =>
      path.includes('/organisation_group_id=') && !path.includes(`/organisation_group_id=${GROUP}/`);
    const otherState = (path: string) => !path.endsWith(`/${GROUP}.json`) && /^(orders|credit|users)\//.test(path);
    const untouched = {
      lake: fingerprint(dir, 'lake', others),
      state: fingerprint(dir, 'state', otherState),
      marts: await otherGroupsInMarts(dir),
    };
    expect(Object.keys(untouched.lake).filter((f) => /^(orders|credit|users)\//.test(f))).not.toHaveLength(0);
    const credit = fingerprint(dir, 'lake', (f) => f.startsWith(`credit/organisation_group_id=${GROUP}/`));
    // a Complete September order cancelled upstream weeks later (UTC days inside London's September)
    const [i] = completeOrders(sandbox, GROUP, ['2026-09-02', '2026-09-29'], 1, 3);
    const store = sandbox.world.orders;
    const cancelled = store.get(i);
    store.setStatus(i, 'Cancelled');
    try {
      const r = await runCli(['close', '--month', SEPTEMBER, '--group', String(GROUP)], closeEnv(sandbox, dir));
      expect(r.code, r.stderr).toBe(0);
      const head = new RegExp(
        `^re-read ${SEPTEMBER} for group ${GROUP} \\(30 windows, (\\d+) calls\\), the lake before → the API now:\\n  group ${GROUP} \\(30 days re-read\\): 0 new, 1 changed, 0 removed\\n`,
      );
      expect(r.stdout).toMatch(head);
      const calls = head.exec(r.stdout)?.[1];
      // one call per window (a tiny group's day is one page), the groups listing and the token: not 4 groups' 120
      expect(Number(calls)).toBeGreaterThanOrEqual(30);
      expect(Number(calls)).toBeLessThanOrEqual(33);
      const currency = store.currencyOf(i);
      const was = before.find((c) => c.currency === currency)!;
      expect(r.stdout).toContain(
        `\n    ${currency}: orders ${was.orders} → ${was.orders}, recognised revenue ${was.recognised} → ${minus(was.recognised, cancelled.group_revenue)} (-${minus('0.00', -cancelled.group_revenue)})\n`,
      );
      expect(r.stdout).toContain(`\n  group ${GROUP} order ${cancelled.order_id}: Complete → Cancelled (`);
      const [, refreshed, holders] = /\ncredit refreshed for (\d+) of (\d+) holders/.exec(r.stdout)!;
      expect(Number(refreshed)).toBeGreaterThan(0);
      expect(refreshed).toBe(holders);
      const record = JSON.parse(readFileSync(join(dir, 'closes', 'closes.jsonl'), 'utf8'));
      expect(record.figures.reread).toMatchObject({ windows: 30, new: 0, changed: 1, removed: 0 });
      expect(record.figures.reread.accepted_changes).toBeUndefined();
      expect(await septemberOf(dir)).toEqual(
        before.map((c) =>
          c.currency === currency ? { ...c, recognised: minus(c.recognised, cancelled.group_revenue) } : c,
        ),
      );
      // the group's credit was read again; every other group's lake, state and mart rows are as they were
      expect(fingerprint(dir, 'lake', (f) => f.startsWith(`credit/organisation_group_id=${GROUP}/`))).not.toEqual(
        credit,
      );
      expect(fingerprint(dir, 'lake', others)).toEqual(untouched.lake);
      expect(fingerprint(dir, 'state', otherState)).toEqual(untouched.state);
      expect(await otherGroupsInMarts(dir)).toEqual(untouched.marts);
    } finally {
      store.setStatus(i, 'Complete');
    }
  }, 300_000);
});

describe('the extract holds a final month the API suddenly lists empty', () => {
  test('held (exit 4), the lake unchanged, an alert-worthy line naming the one command that applies it; the close refuses it too; the command applies it', async () => {
    const dir = copyOfBase();
    const store = sandbox.world.orders;
    const groupIndex = sandbox.world.groups.findIndex((g) => g.id === GROUP);
    const hidden: number[] = [];
    for (let i = 0; i < store.count; i++)
      if (store.group[i] === groupIndex && store.hidden[i] === 0) {
        store.setHidden(i, true); // the API answers the group's listings with empty pages
        hidden.push(i);
      }
    const septemberOrders = (await septemberOf(dir)).reduce((n, c) => n + c.orders, 0);
    const untouched = await lakeOfGroup(dir);
    const final = await lakeOfGroup(dir, '2026-11-01');
    expect(untouched.orders.length).toBeGreaterThan(septemberOrders);
    try {
      const env = orgEnv(sandbox, dir);
      const held = await runCli(
        ['extract', '--streams', 'orders', '--start-date', `${SEPTEMBER}-01`, '--end-date', '2026-10-01', '--quiet'],
        env,
      );
      expect(held.code, held.stderr).toBe(4);
      expect(stderrLines(held)).toHaveLength(1);
      const accept = `perks extract --streams orders --groups ${GROUP} --start-date ${SEPTEMBER}-01 --end-date 2026-10-01 --accept-changes`;
      expect(held.stderr).toBe(
        `perks: held, not applied: the re-read of a final month would change more than the guard allows (more than 20 orders removed or changed (a refund or a cancellation aside) and more than 2% of the recognised revenue moved in one currency, or no order left): group ${GROUP} ${SEPTEMBER} (orders: the API lists none of its ${septemberOrders} orders); the lake keeps it as before. Check the API (PERKS_BASE_URL, the credential); if it is right, apply it with \`${accept}\`\n`,
      );
      expect(held.stdout).toMatch(
        new RegExp(
          `^run \\S+: partial\\n[^]*\\n    group ${GROUP}: ${SEPTEMBER} \\(final, 30 days re-read\\) HELD, not applied: 0 new, 0 changed, ${septemberOrders} removed; `,
        ),
      );
      expect(await lakeOfGroup(dir)).toEqual(untouched);
      // the close re-reads the month and stops the same way, before anything is signed
      const close = await runCli(['close', '--month', SEPTEMBER, '--group', String(GROUP)], closeEnv(sandbox, dir));
      expect(close.code, close.stderr).toBe(2);
      expect(close.stderr).toContain(`group ${GROUP} (the API lists none of its ${septemberOrders} orders)`);
      expect(await lakeOfGroup(dir)).toEqual(untouched);
      expect(existsSync(join(dir, 'closes', 'closes.jsonl'))).toBe(false);
      // the scheduled run's extract (perks run's first step) on its weekly deep re-read: October, final, is held too
      const deep = await atInstant(`${TODAY}T12:00:00Z`, () =>
        extract(orgConfig(sandbox, dir, { PERKS_START_DATE: '2026-09-01' }), {
          output: outputAt(dir),
          now: new Date(`${TODAY}T12:00:00Z`),
          streams: ['orders'],
        }),
      );
      expect(deep).toMatchObject({ status: 'partial', exitCode: 4 });
      expect(deep.held).toEqual([
        expect.objectContaining({
          stream: 'orders',
          group: GROUP,
          month: '2026-10',
          from: '2026-10-01',
          to: '2026-11-01',
        }),
      ]);
      expect(deep.heldMessage).toContain(
        `\`perks extract --streams orders --groups ${GROUP} --start-date 2026-10-01 --end-date 2026-11-01 --accept-changes\``,
      );
      // the final months as they were (November's days, provisional, are the lookback's: emptied as listed)
      expect(await lakeOfGroup(dir, '2026-11-01')).toEqual(final);

      // the operator checked: the one command named applies it
      const applied = await runCli([...accept.split(' ').slice(1), '--quiet'], env);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toContain(
        `\n    group ${GROUP}: ${SEPTEMBER} (final, 30 days re-read) beyond the guard, applied (--accept-changes): 0 new, 0 changed, ${septemberOrders} removed; `,
      );
      const [{ n }] = await query(
        ':memory:',
        `SELECT count(*) AS n FROM read_parquet('${join(dir, 'lake', 'orders')}/**/*.parquet', hive_partitioning = true)
         WHERE organisation_group_id = ${GROUP} AND order_date >= DATE '${SEPTEMBER}-01' AND order_date < DATE '2026-10-01'`,
      );
      expect(Number(n)).toBe(0);
    } finally {
      for (const i of hidden) store.setHidden(i, false);
    }
  }, 300_000);
});
