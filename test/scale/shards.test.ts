import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { extract, shardOfUser, shiftDay, type ExtractResult } from '../../src/extract/index.js';
import { STREAM_NAMES } from '../../pipelines/index.js';
import { streamRows } from '../support/lake-check.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const noon = (day: string) => new Date(`${day}T12:00:00Z`);
const sandbox = sandboxForFile({ seed: 23, today: TODAY });

const config = (out: string) =>
  loadConfig(orgEnv(sandbox(), out, { PERKS_RATE_LIMIT: '100000', PERKS_START_DATE: '2026-10-20' }));
const refreshed = (r: ExtractResult, stream: string) => {
  const users: Record<string, number> = {};
  for (const g of r.streams.find((s) => s.name === stream)?.groups ?? [])
    for (const [k, v] of Object.entries(g.users ?? {})) users[k] = (users[k] ?? 0) + v;
  return users;
};
const sumReasons = (...xs: Record<string, number>[]) => {
  const total: Record<string, number> = {};
  for (const x of xs) for (const [k, v] of Object.entries(x)) total[k] = (total[k] ?? 0) + v;
  return total;
};

describe('--shard K/N', () => {
  test('users fall into shards by a stable hash of their id, all shards used', () => {
    const counts = [0, 0, 0];
    for (let id = 1; id <= 3000; id++) counts[shardOfUser(id, 3) - 1] += 1;
    for (const n of counts) expect(n).toBeGreaterThan(900);
    expect(shardOfUser(12345, 7)).toBe(shardOfUser(12345, 7));
  });

  test('workers on disjoint --groups in one output directory land together what one worker lands, offers once', async () => {
    const single = tempOut('perks-scale-shards-');
    const shared = tempOut('perks-scale-shards-');
    const ids = sandbox().credentials.organisation.organisation_group_ids;
    const slice = (groups: number[]) =>
      loadConfig(
        orgEnv(sandbox(), shared, {
          PERKS_RATE_LIMIT: '100000',
          PERKS_START_DATE: '2026-10-20',
          PERKS_GROUP_IDS: groups.join(','),
        }),
      );
    const now = noon(TODAY);
    const [alone, low, high] = await Promise.all([
      extract(config(single), { output: outputAt(single), now }),
      extract(slice(ids.slice(0, 2)), { output: outputAt(shared), now, groupSlice: true }),
      extract(slice(ids.slice(2)), { output: outputAt(shared), now, groupSlice: true }),
    ]);
    for (const r of [alone, low, high]) expect(r.status).toBe('success');
    expect(low.streams.find((s) => s.name === 'offers')?.status).toBe('success');
    expect(high.streams.find((s) => s.name === 'offers')?.status).toBe('skipped');
    for (const stream of STREAM_NAMES)
      expect(await streamRows(shared, stream), stream).toEqual(await streamRows(single, stream));
  });

  test('shards 1/2 and 2/2 in one output directory land together exactly what one worker lands alone, also on the next incremental run', async () => {
    const single = tempOut('perks-scale-shards-');
    const shared = tempOut('perks-scale-shards-');
    for (const day of [TODAY, shiftDay(TODAY, 2)]) {
      if (day !== TODAY) sandbox().advance(2);
      const now = noon(day);
      // Shard 2 starts first: it waits for shard 1's hand-off of the day.
      const [alone, two, one] = await Promise.all([
        extract(config(single), { output: outputAt(single), now }),
        extract(config(shared), { output: outputAt(shared), now, shard: { index: 2, count: 2 } }),
        extract(config(shared), { output: outputAt(shared), now, shard: { index: 1, count: 2 } }),
      ]);
      for (const r of [alone, one, two])
        expect(r.status, JSON.stringify(r.streams.map((s) => [s.name, s.status, s.error]))).toBe('success');
      // Shard 2 called no listing but the per-user ones.
      expect(two.streams.filter((s) => s.calls > 0).map((s) => s.name)).toEqual(['credit', 'interactions']);
      for (const stream of ['credit', 'interactions']) {
        expect(sumReasons(refreshed(one, stream), refreshed(two, stream)), `${stream} on ${day}`).toEqual(
          refreshed(alone, stream),
        );
      }
      // Day one: every user is new. Day three: users with new orders are refreshed, in shard 2 too (the hand-off carried them).
      expect(refreshed(two, 'credit')[day === TODAY ? 'new' : 'active']).toBeGreaterThan(0);
      for (const stream of STREAM_NAMES) {
        const expected = await streamRows(single, stream);
        expect(expected.length, stream).toBeGreaterThan(0);
        expect(await streamRows(shared, stream), `${stream} on ${day}`).toEqual(expected);
      }
    }
    expect(readdirSync(join(shared, 'state', 'shard_handoff')).length).toBe(
      sandbox().credentials.organisation.organisation_group_ids.length,
    );
    // Each shard keeps its own per-user state; no state file is written by two workers.
    const group = sandbox().credentials.organisation.organisation_group_ids[0];
    for (const k of [1, 2])
      expect(existsSync(join(shared, 'state', 'credit', `${group}.shard-${k}-of-2.json`))).toBe(true);
    expect(existsSync(join(shared, 'state', 'credit', `${group}.json`))).toBe(false);
  });
});
