import { beforeAll, describe, expect, test } from 'vitest';
import { cpSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '../../src/extract/index.js';
import { compactLake } from '../../src/compact/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import { orgConfig } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { filesOf } from './helpers.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const sandbox = sandboxForFile({ seed: 11, today: TODAY });

/** Every row of a stream as JSON text (columns in name order), sorted: equal lakes hold equal rows. */
async function rowsOf(out: string, stream: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const source = `read_parquet(${JSON.stringify(join(out, 'lake', stream, '**', '*.parquet')).replaceAll('"', "'")}, hive_partitioning = true, union_by_name = true)`;
    const names = (await c.runAndReadAll(`DESCRIBE SELECT * EXCLUDE (_snapshot_month) FROM ${source}`))
      .getRowObjectsJS()
      .map((x) => x.column_name as string)
      .sort();
    const r = await c.runAndReadAll(
      `SELECT to_json(t)::VARCHAR AS j FROM (SELECT ${names.map((n) => `"${n}"`).join(', ')} FROM ${source}) t ORDER BY j`,
    );
    return r.getRowObjectsJS().map((x) => x.j as string);
  });
}

/** What "latest per key" gives (the staging models' rule): key → the latest row's run. */
async function latest(out: string, stream: string, key: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT organisation_group_id || '/' || "${key}" || ' ' || _run_id || ' ' || _snapshot_date AS x
       FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)
       QUALIFY row_number() OVER (PARTITION BY organisation_group_id, "${key}" ORDER BY _extracted_at DESC, _run_id DESC) = 1 ORDER BY x`,
      { glob: join(out, 'lake', stream, '**', '*.parquet') },
    );
    return r.getRowObjectsJS().map((x) => x.x as string);
  });
}

describe('compaction of per-user refresh batches', () => {
  test('credit and interactions: refresh batches of a closed month become one file per group and month, every row and every latest row the same', async () => {
    const out = copyOf(landed);
    const config = orgConfig(sandbox(), out, { PERKS_START_DATE: '2026-08-01', PERKS_REFRESH_DAYS: '7' });
    const before = { credit: await rowsOf(out, 'credit'), interactions: await rowsOf(out, 'interactions') };
    const latestBefore = {
      credit: await latest(out, 'credit', 'user_id'),
      interactions: await latest(out, 'interactions', 'id'),
    };
    expect(filesOf(out, 'credit').every((f) => f.includes('/_snapshot_month='))).toBe(true);
    const r = await compactLake(outputAt(out), { lookbackDays: 7, now: new Date(`${TODAY}T12:00:00Z`) });
    const groups = sandbox().credentials.organisation.organisation_group_ids.length;
    for (const stream of ['credit', 'interactions'] as const) {
      const files = filesOf(out, stream);
      const s = r.streams.find((x) => x.stream === stream)!;
      expect(s.months, stream).toBeGreaterThan(0);
      expect(files.filter((f) => /_snapshot_month=2026-(09|10)\/month-/.test(f)).length, stream).toBe(s.months);
      expect(
        files.filter((f) => /_snapshot_month=2026-(09|10)\/part-/.test(f)),
        stream,
      ).toEqual([]);
      expect(files.length, stream).toBeLessThanOrEqual(groups * 3);
      expect(await rowsOf(out, stream), stream).toEqual(before[stream]);
    }
    expect(await latest(out, 'credit', 'user_id')).toEqual(latestBefore.credit);
    expect(await latest(out, 'interactions', 'id')).toEqual(latestBefore.interactions);
    // The next refresh lands beside the compacted months, and a second compaction changes nothing.
    const next = await extract(config, {
      output: outputAt(out),
      now: new Date(`${TODAY}T12:00:00Z`),
      streams: ['users', 'credit', 'interactions'],
    });
    expect(next.status).toBe('success');
    const files = filesOf(out, 'credit');
    expect(
      (await compactLake(outputAt(out), { lookbackDays: 7, now: new Date(`${TODAY}T12:00:00Z`) })).streams.find(
        (x) => x.stream === 'credit',
      )!.months,
    ).toBe(0);
    expect(filesOf(out, 'credit')).toEqual(files);
  }, 180_000);

  test('refresh batches of the earlier layout (the day in the path) move over: closed months compacted, the open month days into day files', async () => {
    const out = copyOf(landed);
    const before = { credit: await rowsOf(out, 'credit'), interactions: await rowsOf(out, 'interactions') };
    for (const stream of ['credit', 'interactions']) await toLegacy(out, stream);
    expect(filesOf(out, 'credit').every((f) => f.includes('/_snapshot_date='))).toBe(true);
    await compactLake(outputAt(out), { lookbackDays: 7, now: new Date(`${TODAY}T12:00:00Z`) });
    for (const stream of ['credit', 'interactions'] as const) {
      expect(
        filesOf(out, stream).some((f) => f.includes('_snapshot_date=')),
        stream,
      ).toBe(false);
      expect(await rowsOf(out, stream), stream).toEqual(before[stream]);
    }
  }, 300_000);
});

let landed: string;
beforeAll(async () => {
  landed = tempOut('perks-compact-user-');
  const config = orgConfig(sandbox(), landed, { PERKS_START_DATE: '2026-08-01', PERKS_REFRESH_DAYS: '7' });
  for (const day of ['2026-09-03', '2026-09-20', '2026-10-12', '2026-11-21']) {
    const r = await extract(config, {
      output: outputAt(landed),
      now: new Date(`${day}T12:00:00Z`),
      streams: ['users', 'credit', 'interactions'],
    });
    expect(r.status, day).toBe('success');
  }
}, 180_000);

const copyOf = (src: string) => {
  const out = tempOut('perks-compact-user-');
  cpSync(src, out, { recursive: true });
  return out;
};

/** A stream rewritten in the layout before month folders: `_snapshot_date=D/` folders, the day in the path only. */
async function toLegacy(out: string, stream: string): Promise<void> {
  const dir = join(out, 'lake', stream);
  const staging = join(out, `legacy-${stream}`);
  await withLakeConnection((c) =>
    c.run(
      `COPY (SELECT * EXCLUDE (_snapshot_month) FROM read_parquet('${join(dir, '**', '*.parquet')}', hive_partitioning = true, union_by_name = true))
       TO '${staging}' (FORMAT parquet, PARTITION_BY (organisation_group_id, _snapshot_date), FILENAME_PATTERN 'part-legacy-{i}')`,
    ),
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
}
