import { join } from 'node:path';
import { expect, test } from 'vitest';
import { extract } from '../../src/extract/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { buildWarehouse } from '../../src/transform/index.js';
import { orgConfig, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { query } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

const READ_DAY = '2026-11-22';
const LATER_DAYS = 28; // the build runs on 2026-12-20: items granted from late November 2025 expire in between
const cents = (money: string | number | boolean | null) => Math.round(Number(money) * 100);

test('credit items that expire between the extract and the build are expired in the marts, without a call', async () => {
  await withSandbox({ today: READ_DAY }, async (sandbox) => {
    const out = tempOut('perks-credit-as-of-');
    const r = await extract(orgConfig(sandbox, out), {
      output: outputAt(out),
      now: new Date(`${READ_DAY}T12:00:00Z`),
      streams: ['credit'],
    });
    expect(r.status).toBe('success');
    const readTo = sandbox.world.now();
    const callsAfterExtract = sandbox.stats().calls;

    // Later: the platform's clock and the program's move on together; nothing is extracted again.
    sandbox.world.clock.advance(LATER_DAYS);
    const buildAt = new Date(sandbox.world.now());
    const before = setClock(clockFrom(buildAt));
    try {
      const asOf = buildAt.toISOString().slice(0, 10);
      expect((await buildWarehouse({ output: outputAt(out), asOf })).ok).toBe(true);
      expect(sandbox.stats().calls).toBe(callsAfterExtract);
      const wh = join(out, 'warehouse.duckdb');
      const lake = await query(
        wh,
        `SELECT organisation_group_id AS g, user_id AS u, available, strftime(_extracted_at, '%Y-%m-%dT%H:%M:%SZ') AS read_at FROM lake_credit`,
      );
      const marts = new Map(
        (
          await query(
            wh,
            `SELECT organisation_group_id AS g, user_id AS u, credit_available, credit_expired, strftime(balance_read_at, '%Y-%m-%dT%H:%M:%SZ') AS read_at FROM engagement_users WHERE balance_read_at IS NOT NULL`,
          )
        ).map((row) => [`${row.g}/${row.u}`, row]),
      );
      let expiredSince = 0;
      const available = new Map<string, number>();
      for (const { g, u, available: read, read_at } of lake) {
        const user = sandbox.world.users.find(Number(g), 'id', String(u))!;
        // the platform's truth now, over the items it had granted when the balance was read
        const items = sandbox.world.creditOf(user).credits.filter((i) => i.created_at <= readTo);
        const truth = items.filter((i) => i.status === 'Available').reduce((s, i) => s + i.remaining_amount, 0);
        const expired = items.filter((i) => i.status === 'Expired').reduce((s, i) => s + i.remaining_amount, 0);
        const row = marts.get(`${g}/${u}`);
        if (!row) continue; // a user no longer current (engagement_users holds current users)
        expect({
          user: `${g}/${u}`,
          available: cents(row.credit_available),
          expired: cents(row.credit_expired),
        }).toEqual({ user: `${g}/${u}`, available: truth, expired });
        expect(row.read_at).toBe(read_at);
        if (cents(read) !== truth) expiredSince++;
        available.set(String(g), (available.get(String(g)) ?? 0) + truth);
      }
      expect(expiredSince).toBeGreaterThan(0); // the case is not vacuous

      // The liability of the build's month is taken at the build's instant, from the same items.
      const liability = await query(
        wh,
        `SELECT organisation_group_id AS g, credit_available, credit_expired_since_read AS since FROM credit_liability_monthly WHERE month = DATE '2026-12-01'`,
      );
      expect(liability.length).toBeGreaterThan(0);
      for (const row of liability) expect(cents(row.credit_available)).toBe(available.get(String(row.g)));
      expect(liability.some((row) => cents(row.since) > 0)).toBe(true);
    } finally {
      setClock(before);
    }
  });
}, 300_000);
