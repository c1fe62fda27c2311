/**
 * Group records the schema refuses (issue 4, gap 1): quarantined and counted like any listing's bad
 * record, and the run goes on. A requested group's refused record is read leniently (id, timezone);
 * only a timezone that cannot be read at all stops that group's windowed streams.
 */
import { describe, expect, test } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract, shiftDay } from '../../src/extract/index.js';
import { startProxy, type Proxy } from '../support/proxy.js';
import { runCli, stderrLines } from '../support/cli.js';
import { lakeOrders } from '../support/lake-check.js';
import { orgConfig, orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { todayUtc } from '../../src/shared/clock.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = todayUtc();
const START = shiftDay(TODAY, -5);
// Seed 4 at 20% drift: group 11's record (requested) and group 14's (not requested) get a wrong type.
const sandbox = sandboxForFile({ seed: 4, today: TODAY });

/** The records of <out>/quarantine/<stream>/*. */
function quarantined(out: string, stream: string): Record<string, unknown>[] {
  const dir = join(out, 'quarantine', stream);
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).record),
  );
}

describe('a group record the schema refuses', () => {
  test('at 20% drift with PERKS_GROUP_IDS=11,12, the refused records of groups 11 and 14 are quarantined and counted, and every stream of groups 11 and 12 lands', async () => {
    const out = tempOut();
    sandbox().setFaults({ driftRate: 0.2 });
    try {
      const r = await extract(orgConfig(sandbox(), out, { PERKS_GROUP_IDS: '11,12', PERKS_START_DATE: START }), {
        output: outputAt(out),
      });
      expect(r.streams.map((s) => [s.name, s.status])).toEqual(
        ['groups', 'users', 'offers', 'orders', 'redemption_stats', 'credit', 'interactions'].map((n) => [
          n,
          'success',
        ]),
      );
      const groups = r.streams.find((s) => s.name === 'groups')!;
      expect([groups.rows, groups.rejected]).toEqual([1, 2]);
      expect(
        quarantined(out, 'groups')
          .map((g) => g.id)
          .sort(),
      ).toEqual([11, 14]);
      expect(quarantined(out, 'groups').every((g) => g.sandbox === 'n/a')).toBe(true);
      // Group 11 runs on the fields read from its refused record: its own timezone, its orders.
      expect(r.groups).toEqual(
        [11, 12].map((id) =>
          expect.objectContaining({ id, timezone: sandbox().world.groups.find((g) => g.id === id)!.timezone }),
        ),
      );
      expect(new Set((await lakeOrders(out)).map((o) => o.group))).toEqual(new Set([11, 12]));
      expect(r.quarantined).toBe(r.streams.reduce((n, s) => n + s.rejected, 0));
    } finally {
      sandbox().setFaults({ driftRate: 0 });
    }
  });

  test('a requested group whose timezone cannot be read: its orders and redemption stats fail with one line each, exit 1, and every other stream and group lands', async () => {
    // The sandbox never sends a wrong-typed timezone: a proxy rewrites group 12's in the listing.
    const proxy: Proxy = await startProxy(sandbox().baseUrl, {
      rewriteResponse: (req, answer) => {
        if (req.path !== '/v3/group/list') return answer;
        const body = JSON.parse(answer.body);
        for (const g of body.data) if (g.id === 12) g.timezone = 5;
        return { ...answer, body: JSON.stringify(body) };
      },
    });
    try {
      const out = tempOut();
      const r = await runCli(
        ['extract', '--quiet'],
        orgEnv(sandbox(), out, { PERKS_BASE_URL: proxy.url, PERKS_GROUP_IDS: '11,12', PERKS_START_DATE: START }),
      );
      expect(r.code, r.stderr).toBe(1);
      const line = (stream: string) =>
        `perks: ${stream}: group 12: its timezone cannot be read (value: 5): no ${stream} window extracted for it, the other groups' were; fix the timezone upstream and rerun`;
      // The refused record itself is the one quarantined record: above the 0.1% threshold too.
      expect(stderrLines(r)).toEqual([
        line('orders'),
        line('redemption_stats'),
        expect.stringMatching(/^perks: quarantined 1 of \d+ records \(0\.\d%\), above the 0\.1% threshold/),
      ]);
      const manifest = JSON.parse(readFileSync(/manifest: (\S+)/.exec(r.stdout)![1], 'utf8'));
      expect(manifest.status).toBe('error');
      expect(manifest.streams.map((s: { name: string; status: string }) => `${s.name} ${s.status}`)).toEqual([
        'groups success',
        'users success',
        'offers success',
        'orders error',
        'redemption_stats error',
        'credit success',
        'interactions success',
      ]);
      expect(manifest.streams.find((s: { name: string }) => s.name === 'orders').failed_groups).toEqual([12]);
      expect(new Set((await lakeOrders(out)).map((o) => o.group))).toEqual(new Set([11]));
      const credit = manifest.streams.find((s: { name: string }) => s.name === 'credit');
      expect(credit.groups.map((g: { group: number }) => g.group)).toEqual([11, 12]);
      expect(quarantined(out, 'groups').map((g) => g.id)).toEqual([12]);
    } finally {
      await proxy.close();
    }
  });
});
