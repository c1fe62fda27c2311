import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadConfig } from '../../src/config/index.js';
import { DEFAULT_SQL_DIR, interactionId, runWriteback, WritebackModelError } from '../../src/writeback/index.js';
import { tempOut } from '../support/scratch.js';
import { writeMarts, type SavingsMonth } from './fixtures.js';
import { outputAt } from '../../src/output/index.js';

/**
 * The models' rows for these marts, without an API (a dry run needs none); `byMonths`: savings_monthly as a
 * build with PERKS_MART_LAYOUT=months leaves it, month files only.
 */
async function modelRows(marts: Parameters<typeof writeMarts>[1], sqlDir?: string, byMonths = false) {
  const outDir = tempOut();
  await writeMarts(outDir, marts);
  if (byMonths) await splitByMonths(path.join(outDir, 'marts'), 'savings_monthly');
  const result = await runWriteback({
    output: outputAt(outDir),
    config: loadConfig({}),
    dryRun: true,
    previewRows: 1000,
    sqlDir,
  });
  return result.preview;
}

const month = (m: string, saving: number, currency: string | null = 'GBP'): SavingsMonth => ({
  organisation_group_id: 11,
  user_id: 7,
  month: m,
  order_currency: currency,
  order_saving: saving,
  egift_savings: 0,
});

/** `<mart>.parquet` → `<mart>/<YYYY-MM>.parquet`, one file per month, the file removed. */
async function splitByMonths(dir: string, mart: string) {
  const file = path.join(dir, `${mart}.parquet`);
  fs.mkdirSync(path.join(dir, mart));
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const months = await conn.runAndReadAll(`SELECT DISTINCT strftime(month, '%Y-%m') AS m FROM read_parquet($f)`, {
      f: file,
    });
    for (const { m } of months.getRowObjectsJson() as { m: string }[])
      await conn.run(
        `COPY (SELECT * FROM read_parquet($f) WHERE strftime(month, '%Y-%m') = $m) TO '${path.join(dir, mart, `${m}.parquet`)}' (FORMAT parquet)`,
        { f: file, m },
      );
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  fs.rmSync(file);
}

describe('the write-back models', () => {
  test('a savings milestone is sent once per threshold, dated the month it is first reached', async () => {
    const savings = [
      month('2026-01-01', 30),
      month('2026-02-01', 30),
      month('2026-03-01', -20),
      month('2026-04-01', 20),
      month('2026-05-01', 300),
    ];
    savings[4].egift_savings = 0.5;
    const rows = await modelRows({ users: [], savings });
    expect(
      rows.map((r) => [
        r.interaction_details.threshold,
        r.interaction_at,
        r.interaction_details.month,
        r.interaction_id,
      ]),
    ).toEqual(
      [
        [50, '2026-02-01T00:00:00.000Z', '2026-02', interactionId(11, 7, 'savings_milestone', 50)],
        [100, '2026-05-01T00:00:00.000Z', '2026-05', interactionId(11, 7, 'savings_milestone', 100)],
        [250, '2026-05-01T00:00:00.000Z', '2026-05', interactionId(11, 7, 'savings_milestone', 250)],
      ].sort((a, b) => Number(a[3]) - Number(b[3])),
    );
    expect(rows.find((r) => r.interaction_details.threshold === 250)?.interaction_details.cumulative_saving).toBe(
      360.5,
    );
    expect(
      rows.every((r) => r.identifier === 'id' && r.identifier_value === '7' && r.kind === 'savings_milestone'),
    ).toBe(true);
  });

  test('a mart exported by months only (PERKS_MART_LAYOUT=months) is read from its month files: the same rows', async () => {
    const savings = [month('2026-01-01', 30), month('2026-02-01', 30), month('2026-05-01', 300)];
    const fromFile = await modelRows({ users: [], savings });
    expect(fromFile.length).toBe(3);
    expect(await modelRows({ users: [], savings }, undefined, true)).toEqual(fromFile);
  });

  test("savings in another currency than the group's are not added in; egift-only months are", async () => {
    const other = (m: string): SavingsMonth => ({ ...month(m, 5), user_id: 8 });
    const savings = [
      month('2026-01-01', 40),
      month('2026-02-01', 500, 'EUR'),
      { ...month('2026-03-01', 0, null), egift_savings: 15 },
      other('2026-01-01'),
      other('2026-02-01'),
    ];
    const rows = await modelRows({ users: [], savings });
    expect(rows.map((r) => r.interaction_details)).toEqual([
      { threshold: 50, cumulative_saving: 55, currency: 'GBP', month: '2026-03' },
    ]);
  });

  test('a user never told about gets their current segment, with the documented id; an anonymised user gets nothing', async () => {
    const anonymised = { organisation_group_id: 12, user_id: 41, segment: 'churned', is_anonymised: true };
    const rows = await modelRows({
      users: [{ organisation_group_id: 12, user_id: 40, segment: 'dormant' }, anonymised],
      savings: [],
    });
    expect(rows).toEqual([
      expect.objectContaining({
        interaction_id: interactionId(12, 40, 'segment_change', 1, 'dormant'),
        organisation_group_id: 12,
        identifier: 'id',
        identifier_value: '40',
        kind: 'segment_change',
        interaction_type: 'segment_change',
        interaction_details: { segment: 'dormant', previous_segment: null, change_number: 1 },
      }),
    ]);
  });

  test('a model that reads a missing mart fails naming its file and the marts there are', async () => {
    const sqlDir = tempOut();
    fs.copyFileSync(
      path.join(DEFAULT_SQL_DIR, 'writeback_savings_milestones.sql'),
      path.join(sqlDir, 'writeback_savings_milestones.sql'),
    );
    fs.writeFileSync(path.join(sqlDir, 'writeback_broken.sql'), 'select * from no_such_mart');
    const failure = modelRows({ users: [], savings: [] }, sqlDir);
    await expect(failure).rejects.toBeInstanceOf(WritebackModelError);
    await expect(failure).rejects.toThrow(
      /model writeback_broken: .*no_such_mart.*writeback_broken\.sql; marts found: engagement_users, savings_monthly/,
    );
  });

  test('two rows with one interaction_id are refused: an id must mean one fact', async () => {
    const sqlDir = tempOut();
    fs.copyFileSync(path.join(DEFAULT_SQL_DIR, 'writeback_savings_milestones.sql'), path.join(sqlDir, 'a.sql'));
    fs.copyFileSync(path.join(DEFAULT_SQL_DIR, 'writeback_savings_milestones.sql'), path.join(sqlDir, 'b.sql'));
    await expect(modelRows({ users: [], savings: [month('2026-01-01', 60)] }, sqlDir)).rejects.toThrow(
      /model b: interaction_id \d+ is also produced by model a/,
    );
  });
});
