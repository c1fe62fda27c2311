import { describe, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { quotedString } from '@duckdb/node-api';
import { compactLake } from '../../src/compact/index.js';
import { forgetUsers } from '../../src/forget/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { tempOut } from '../support/scratch.js';
import { filesOf } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

const day = (start: string, n: number) =>
  new Date(Date.parse(`${start}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** 60 daily users snapshots of group 11 (2026-09-24 … 2026-11-22); user 3 used temp@example.com on 3 and 4 October only. */
async function usersLake(out: string): Promise<string[]> {
  const days = Array.from({ length: 60 }, (_, i) => day('2026-09-24', i));
  await withLakeConnection(async (c) => {
    for (const d of days) {
      const dir = join(out, 'lake', 'users', 'organisation_group_id=11', `_snapshot_date=${d}`);
      mkdirSync(dir, { recursive: true });
      const email3 =
        d === '2026-10-03' || d === '2026-10-04'
          ? 'temp@example.com'
          : d < '2026-10-03'
            ? 'old3@example.com'
            : 'new3@example.com';
      await c.run(
        `COPY (SELECT i::BIGINT AS id, 'uid-' || i AS UID, NULL::VARCHAR AS alt_uid, 'First' || i AS first_name, 'Last' || i AS last_name,
                      CASE WHEN i = 3 THEN $e3 ELSE 'user' || i || '@example.com' END AS email,
                      TIMESTAMPTZ '${d} 02:00:00+00' AS _extracted_at, 'run-${d}' AS _run_id
               FROM range(1, 6) t(i)) TO ${quotedString(join(dir, 'part-0.parquet'))} (FORMAT parquet)`,
        { e3: email3 },
      );
    }
  });
  return days;
}

describe('users snapshots retention', () => {
  test('keeps the last 14 days and the last snapshot of each earlier month, and any snapshot holding values no kept one holds', async () => {
    const out = tempOut('perks-retention-');
    await usersLake(out);
    const r = await compactLake(outputAt(out), { lookbackDays: 7, now: new Date('2026-11-22T12:00:00Z') });
    const kept = filesOf(out, 'users').map((f) => /_snapshot_date=([\d-]+)/.exec(f)![1]);
    const last14 = Array.from({ length: 14 }, (_, i) => day('2026-11-09', i));
    expect(kept).toEqual(['2026-09-30', '2026-10-03', '2026-10-04', '2026-10-31', ...last14]);
    expect(r.snapshots.find((s) => s.stream === 'users')).toMatchObject({
      dropped: 42,
      heldForPersonalData: 2,
      filesBefore: 60,
      filesAfter: 18,
    });
    // Once user 3 is forgotten, nothing holds those values any more: the two snapshots go too.
    await forgetUsers(outputAt(out), [3]);
    await compactLake(outputAt(out), { lookbackDays: 7, now: new Date('2026-11-22T12:00:00Z') });
    expect(filesOf(out, 'users')).toHaveLength(16);
  });

  test('a second run removes nothing more', async () => {
    const out = tempOut('perks-retention-');
    await usersLake(out);
    await compactLake(outputAt(out), { lookbackDays: 7, now: new Date('2026-11-22T12:00:00Z') });
    const files = filesOf(out, 'users');
    const again = await compactLake(outputAt(out), { lookbackDays: 7, now: new Date('2026-11-22T12:00:00Z') });
    expect(again.snapshots.find((s) => s.stream === 'users')!.dropped).toBe(0);
    expect(filesOf(out, 'users')).toEqual(files);
  });
});
