import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { withSandbox } from '../support/sandbox.js';
import { orgConfig, tempOut } from '../extract/helpers.js';
import { query } from '../transform/helpers.js';
import { TODAY } from './scenario.js';

describe('credit liability', () => {
  test("each group's credit at the month end equals the platform's balances of the users extracted, and the report shows it", async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-credit-');
      const r = await extract(orgConfig(sandbox, out, { PERKS_START_DATE: '2026-11-01' }), { now: new Date(`${TODAY}T12:00:00Z`), streams: ['orders', 'credit'] });
      expect(r.status).toBe('success');
      expect((await buildWarehouse({ outDir: out, asOf: TODAY })).ok).toBe(true);
      const wh = join(out, 'warehouse.duckdb');
      const users = await query(wh, `SELECT organisation_group_id AS g, user_id AS u FROM lake_credit`);
      const truth = new Map<string, { users: number; available: number; spent: number; expired: number }>();
      for (const { g, u } of users) {
        const user = sandbox.world.users.find(Number(g), 'id', String(u))!;
        const c = sandbox.world.creditOf(user);
        const t = truth.get(String(g)) ?? { users: 0, available: 0, spent: 0, expired: 0 };
        truth.set(String(g), { users: t.users + 1, available: t.available + c.available, spent: t.spent + c.spent, expired: t.expired + c.expired });
      }
      const rows = await query(wh, `SELECT organisation_group_id AS g, users, credit_available, credit_granted, credit_spent, credit_expired FROM credit_liability_monthly WHERE month = DATE '2026-11-01' ORDER BY g`);
      const money = (minor: number) => (minor / 100).toFixed(2);
      expect(rows).toEqual([...truth].sort(([a], [b]) => Number(a) - Number(b)).map(([g, t]) => ({
        g, users: String(t.users), credit_available: money(t.available), credit_granted: money(t.available + t.spent + t.expired), credit_spent: money(t.spent), credit_expired: money(t.expired),
      })));
      const report = await writeRevenueReport({ outDir: out, month: '2026-11', formats: ['md'], revenueRule: { statuses: ['Complete'] } });
      const md = await readFile(report.files[0], 'utf8');
      expect(md).toContain('### Credit liability at 2026-11-30');
      const [first] = rows;
      expect(md).toMatch(new RegExp(`\\\\(${first.g}\\\\) \\\\| ${first.users} \\\\| ${Number(first.credit_available).toLocaleString('en-US', { minimumFractionDigits: 2 })} \\\\|`));
    });
  }, 120_000);
});
