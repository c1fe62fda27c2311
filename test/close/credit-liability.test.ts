import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { closeMonth } from '../../src/close/index.js';
import type { FrozenFigures } from '../../src/closes/index.js';
import { extract } from '../../src/extract/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { closeSummary, writeRevenueReport } from '../../src/report/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { atInstant } from '../support/clock.js';
import { withSandbox } from '../support/sandbox.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from '../transform/helpers.js';
import { TODAY } from './scenario.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

const RULE = { statuses: ['Complete'] };

describe('credit liability', () => {
  test("each group's credit at the month end equals the platform's balances of the users extracted, and the report shows it", async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-credit-');
      const r = await extract(orgConfig(sandbox, out, { PERKS_START_DATE: '2026-11-01' }), {
        output: outputAt(out),
        now: new Date(`${TODAY}T12:00:00Z`),
        streams: ['orders', 'credit'],
      });
      expect(r.status).toBe('success');
      expect((await buildWarehouse({ output: outputAt(out), asOf: TODAY })).ok).toBe(true);
      const wh = join(out, 'warehouse.duckdb');
      const users = await query(wh, `SELECT organisation_group_id AS g, user_id AS u FROM lake_credit`);
      const truth = new Map<string, { users: number; available: number; spent: number; expired: number }>();
      for (const { g, u } of users) {
        const user = sandbox.world.users.find(Number(g), 'id', String(u))!;
        const c = sandbox.world.creditOf(user);
        const t = truth.get(String(g)) ?? { users: 0, available: 0, spent: 0, expired: 0 };
        truth.set(String(g), {
          users: t.users + 1,
          available: t.available + c.available,
          spent: t.spent + c.spent,
          expired: t.expired + c.expired,
        });
      }
      const rows = await query(
        wh,
        `SELECT organisation_group_id AS g, users, credit_available, credit_granted, credit_spent, credit_expired FROM credit_liability_monthly WHERE month = DATE '2026-11-01' ORDER BY g`,
      );
      const money = (minor: number) => (minor / 100).toFixed(2);
      expect(rows).toEqual(
        [...truth]
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([g, t]) => ({
            g,
            users: String(t.users),
            credit_available: money(t.available),
            credit_granted: money(t.available + t.spent + t.expired),
            credit_spent: money(t.spent),
            credit_expired: money(t.expired),
          })),
      );
      const report = await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2026-11',
        formats: ['md'],
        revenueRule: { statuses: ['Complete'] },
      });
      const md = await readFile(report.files[0], 'utf8');
      expect(md).toContain('### Credit liability at 2026-11-30');
      const [first] = rows;
      expect(md).toMatch(
        new RegExp(
          `\\\\(${first.g}\\\\) \\\\| ${first.users} \\\\| ${Number(first.credit_available).toLocaleString('en-US', { minimumFractionDigits: 2 })} \\\\|`,
        ),
      );
    });
  }, 300_000);
});

describe('credit liability under the close', () => {
  test("a closed month's credit liability is frozen in the record; a later change is an adjustment booked in the month observed, and the closed report is the same", async () => {
    await withSandbox({ today: '2026-10-31' }, async (sandbox) => {
      const out = tempOut('perks-credit-close-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' });
      const noon = (day: string) => new Date(`${day}T12:00:00Z`);
      expect(
        (await extract(config, { output: outputAt(out), now: noon('2026-10-31'), streams: ['orders', 'credit'] }))
          .status,
      ).toBe('success');
      sandbox.advance(9); // 9 November: October is past its end plus the 7-day lookback
      expect(
        (await extract(config, { output: outputAt(out), now: noon('2026-11-09'), streams: ['orders'] })).status,
      ).toBe('success');
      expect((await buildWarehouse({ output: outputAt(out), asOf: '2026-11-09' })).ok).toBe(true);
      const wh = join(out, 'warehouse.duckdb');
      const group = sandbox.world.groups[0].id;
      const october = `FROM credit_liability_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'`;
      const [signed] = await query(
        wh,
        `SELECT users, credit_available, credit_granted, credit_spent, credit_expired ${october}`,
      );
      expect(Number(signed.users)).toBeGreaterThan(0);

      setClock(clockFrom(new Date('2026-11-09T13:00:00Z')));
      try {
        const [record] = await closeMonth({
          output: outputAt(out),
          month: '2026-10',
          group,
          by: 'A. Controller',
          rule: RULE,
        });
        expect((record.figures as FrozenFigures).section.credit).toMatchObject({
          users: signed.users,
          available: signed.credit_available,
          granted: signed.credit_granted,
        });
        const report = async () =>
          readFile(
            (
              await writeRevenueReport({
                settings: configFrom(),
                output: outputAt(out),
                month: '2026-10',
                group,
                formats: ['md'],
                revenueRule: RULE,
              })
            ).files[0],
            'utf8',
          );
        const before = await report();

        // Later the lake loses the group's October credit snapshots (a damaged file removed, a restore from an older backup).
        rmSync(join(out, 'lake', 'credit', `organisation_group_id=${group}`, '_snapshot_month=2026-10'), {
          recursive: true,
          force: true,
        });
        expect((await buildWarehouse({ output: outputAt(out), asOf: '2026-11-10' })).ok).toBe(true);
        const [now] = await query(
          wh,
          `SELECT is_closed, users, credit_available, users_as_closed, credit_available_as_closed, credit_granted_as_closed, credit_spent_as_closed, credit_expired_as_closed ${october}`,
        );
        expect(now).toEqual({
          is_closed: true,
          users: '0',
          credit_available: '0.00',
          users_as_closed: signed.users,
          credit_available_as_closed: signed.credit_available,
          credit_granted_as_closed: signed.credit_granted,
          credit_spent_as_closed: signed.credit_spent,
          credit_expired_as_closed: signed.credit_expired,
        });
        const adjustments = await query(
          wh,
          `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS month, strftime(booked_month, '%Y-%m') AS booked, strftime(observed_at, '%Y-%m-%dT%H:%M:%S') AS observed,
          before_users, after_users, before_credit_available, after_credit_available, users_change, credit_available_change, credit_granted_change, credit_spent_change, credit_expired_change, close_record_hash FROM credit_adjustments`,
        );
        const minus = (v: unknown) => (-Number(v)).toFixed(2);
        expect(adjustments).toEqual([
          {
            g: String(group),
            month: '2026-10',
            booked: '2026-11',
            observed: '2026-11-10T23:59:59',
            before_users: signed.users,
            after_users: '0',
            before_credit_available: signed.credit_available,
            after_credit_available: '0.00',
            users_change: String(-Number(signed.users)),
            credit_available_change: minus(signed.credit_available),
            credit_granted_change: minus(signed.credit_granted),
            credit_spent_change: minus(signed.credit_spent),
            credit_expired_change: minus(signed.credit_expired),
            close_record_hash: record.hash,
          },
        ]);
        expect(await closeSummary(outputAt(out), [group])).toContain(
          `adjusted: group ${group} 2026-10 (credit liability)`,
        );
        // the closed month's report, generated again, is the same (its credit section is the frozen one)
        const after = await report();
        expect(after).toBe(before);
        expect(after).toContain(`### Credit liability at 2026-10-31`);
        // November's report lists the adjustment to October's credit liability
        const november = await readFile(
          (
            await writeRevenueReport({
              settings: configFrom(),
              output: outputAt(out),
              month: '2026-11',
              group,
              formats: ['md'],
              revenueRule: RULE,
            })
          ).files[0],
          'utf8',
        );
        expect(november).toContain("### Adjustments to closed months' credit liability booked in");
        expect(november).toContain(`(${group}) | 2026-10 | ${-Number(signed.users)} | -`);
        expect(november).toContain('| 2026-11-10T23:59:59Z |');
      } finally {
        setClock(undefined);
      }
    });
  }, 180_000);

  test("a credit snapshot of the closed month's last day that lands after the close: the adjustment is the snapshot's change, booked in the month it landed (whatever the later builds' as-of day), and the closed report is the same", async () => {
    await withSandbox({ today: '2026-10-31' }, async (sandbox) => {
      const out = tempOut('perks-credit-late-');
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: '2026-10-01' });
      const wh = join(out, 'warehouse.duckdb');
      // Each step at its own instant: the program's clock pinned to it (run ids, close times, when a run finished landing).
      const at = atInstant;
      expect(
        (
          await at('2026-10-31T12:00:00Z', () =>
            extract(config, { output: outputAt(out), streams: ['orders', 'credit'] }),
          )
        ).status,
      ).toBe('success');
      sandbox.advance(9);
      expect(
        (await at('2026-11-09T12:00:00Z', () => extract(config, { output: outputAt(out), streams: ['orders'] })))
          .status,
      ).toBe('success');
      expect(
        (await at('2026-11-09T12:30:00Z', () => buildWarehouse({ output: outputAt(out), asOf: '2026-11-09' }))).ok,
      ).toBe(true);
      const group = sandbox.world.groups[0].id;
      const october = `FROM credit_liability_monthly WHERE organisation_group_id = ${group} AND month = DATE '2026-10-01'`;
      const [signed] = await query(
        wh,
        `SELECT users, credit_available, credit_granted, credit_spent, credit_expired ${october}`,
      );
      const [record] = await at('2026-11-09T13:00:00Z', () =>
        closeMonth({ output: outputAt(out), month: '2026-10', group, by: 'A. Controller', rule: RULE }),
      );
      const report = (month: string, instant: string) =>
        at(instant, async () =>
          readFile(
            (
              await writeRevenueReport({
                settings: configFrom(),
                output: outputAt(out),
                month,
                group,
                formats: ['md'],
                revenueRule: RULE,
              })
            ).files[0],
            'utf8',
          ),
        );
      const before = await report('2026-10', '2026-11-09T14:00:00Z');

      // A run whose clock started at 23:00 on 31 October (so its credit snapshot day is 31 October) lands its
      // credit only at 08:00 on 10 November, after the close: what it brings changes October's month end.
      const late = await at('2026-11-10T08:00:00Z', () =>
        extract(config, { output: outputAt(out), now: new Date('2026-10-31T23:00:00Z'), streams: ['credit'] }),
      );
      expect(late.status).toBe('success');
      expect(Date.parse(late.finishedAt)).toBeGreaterThan(Date.parse(record.at));
      expect(
        (await at('2026-11-10T08:30:00Z', () => buildWarehouse({ output: outputAt(out), asOf: '2026-11-10' }))).ok,
      ).toBe(true);

      // What October's month end is now, from the lake's rows: each user's latest extraction of a day on or before 31 October.
      const rows = await query(
        wh,
        `SELECT user_id AS u, _run_id AS run, strftime(_snapshot_date::DATE, '%Y-%m-%d') AS day, available, spent, expired
        FROM lake_credit WHERE organisation_group_id::BIGINT = ${group} ORDER BY _extracted_at`,
      );
      expect(rows.every((r) => r.day === '2026-10-31')).toBe(true);
      const landedLate = rows.filter((r) => r.run === late.runId);
      expect(landedLate.length).toBeGreaterThan(0);
      // the late rows are the platform's balances of those users when the run read them
      for (const r of landedLate) {
        const c = sandbox.world.creditOf(sandbox.world.users.find(group, 'id', String(r.u))!);
        expect([r.available, r.spent, r.expired].map(Number)).toEqual(
          [c.available, c.spent, c.expired].map((v) => v / 100),
        );
      }
      const latest = new Map(rows.map((r) => [String(r.u), r])); // ordered by extraction: the latest wins
      const sum = (k: 'available' | 'spent' | 'expired') =>
        [...latest.values()].reduce((n, r) => n + Math.round(Number(r[k]) * 100), 0);
      const cents = (v: unknown) => Math.round(Number(v) * 100);
      const money = (c: number) => (c / 100).toFixed(2);
      const now = { users: latest.size, available: sum('available'), spent: sum('spent'), expired: sum('expired') };
      expect(now.users).toBe(new Set(rows.map((r) => String(r.u))).size);
      expect(money(now.available) === signed.credit_available && now.users === Number(signed.users)).toBe(false); // the late snapshot did change October

      const [month] = await query(
        wh,
        `SELECT is_closed, users, credit_available, credit_spent, credit_expired, users_as_closed, credit_available_as_closed ${october}`,
      );
      expect(month).toEqual({
        is_closed: true,
        users: String(now.users),
        credit_available: money(now.available),
        credit_spent: money(now.spent),
        credit_expired: money(now.expired),
        users_as_closed: signed.users,
        credit_available_as_closed: signed.credit_available,
      });
      const adjustments = () =>
        query(
          wh,
          `SELECT organisation_group_id AS g, strftime(month, '%Y-%m') AS month, strftime(booked_month, '%Y-%m') AS booked, epoch_ms(observed_at) AS observed,
        before_users, after_users, before_credit_available, after_credit_available, users_change, credit_available_change, credit_granted_change, credit_spent_change, credit_expired_change, close_record_hash
        FROM credit_adjustments WHERE organisation_group_id = ${group}`,
        );
      const expected = {
        g: String(group),
        month: '2026-10',
        booked: '2026-11',
        observed: String(Date.parse(late.finishedAt)),
        before_users: signed.users,
        after_users: String(now.users),
        before_credit_available: signed.credit_available,
        after_credit_available: money(now.available),
        users_change: String(now.users - Number(signed.users)),
        credit_available_change: money(now.available - cents(signed.credit_available)),
        credit_granted_change: money(now.available + now.spent + now.expired - cents(signed.credit_granted)),
        credit_spent_change: money(now.spent - cents(signed.credit_spent)),
        credit_expired_change: money(now.expired - cents(signed.credit_expired)),
        close_record_hash: record.hash,
      };
      // observed when the late snapshot landed (its run's finish), so booked in November
      expect(await adjustments()).toEqual([expected]);

      // the closed month's report, generated again, is the same: the frozen credit section, not the lake's
      expect(await report('2026-10', '2026-11-10T09:00:00Z')).toBe(before);
      // November's report lists the adjustment, observed when the snapshot landed
      const november = await report('2026-11', '2026-11-10T09:00:00Z');
      expect(november).toContain(`(${group}) | 2026-10 | ${expected.users_change} |`);
      expect(november).toContain(`| ${late.finishedAt.slice(0, 19)}Z |`);

      // A build on a later day observes nothing new: the adjustment stays as it was, booked in November (not moved to December).
      expect(
        (await at('2026-12-02T08:00:00Z', () => buildWarehouse({ output: outputAt(out), asOf: '2026-12-02' }))).ok,
      ).toBe(true);
      expect(await adjustments()).toEqual([expected]);
      expect(await report('2026-10', '2026-12-02T09:00:00Z')).toBe(before);
      expect(await report('2026-11', '2026-12-02T09:00:00Z')).toContain(
        `(${group}) | 2026-10 | ${expected.users_change} |`,
      );
    });
  }, 600_000);
});
