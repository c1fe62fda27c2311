import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';
import { describe, expect, test } from 'vitest';
import { interactionId } from '../../src/writeback/index.js';
import { martsFromSandbox, prepare, sandboxPerTest, storedTimes, storedTotal, writeMarts } from './fixtures.js';

const sandbox = sandboxPerTest();

const setup = (marts?: ReturnType<typeof martsFromSandbox>) => prepare(sandbox(), marts);

describe('perks writeback against the sandbox', () => {
  test('the first run posts every row once and a second run posts nothing', async () => {
    const { run, marts } = await setup();
    const before = storedTotal(sandbox());
    const first = await run();
    const milestones = marts.savings.length / 2; // each saver reaches 50 in September only: 55.50, then 85.50
    expect(first).toMatchObject({
      status: 'success',
      rows: marts.users.length + milestones,
      sent: marts.users.length + milestones,
      rejected: 0,
    });
    expect(storedTotal(sandbox()) - before).toBe(first.sent);
    const times = storedTimes(sandbox());
    const u = marts.users[0];
    expect(times.get(String(interactionId(u.organisation_group_id, u.user_id, 'segment_change', 1, u.segment)))).toBe(
      1,
    );

    // Sent segments are what the platform knows now: the segment model has nothing left to say.
    const second = await run();
    expect(second).toMatchObject({
      rows: milestones,
      sent: 0,
      rejected: 0,
      skipped_already_sent: milestones,
      to_send: 0,
    });
    expect(second.calls).toBe(0);
    expect(storedTotal(sandbox()) - before).toBe(first.sent);
  });

  test('the ledger is a Parquet table in the lake: per row a pending entry, then its outcome', async () => {
    const { run, outDir } = await setup();
    const result = await run({ limit: 6 });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const glob = path.join(outDir, 'lake', 'writeback_ledger', '**', '*.parquet');
    const rows = (
      await conn.runAndReadAll(`SELECT organisation_group_id, status, count(*) AS n, count(DISTINCT interaction_id) AS ids, min(_run_id) AS run
      FROM read_parquet(${quotedString(glob)}, hive_partitioning = true) GROUP BY ALL ORDER BY ALL`)
    ).getRowObjectsJson();
    const columns = (
      await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quotedString(glob)}, hive_partitioning = true)`)
    )
      .getRowObjectsJson()
      .map((c) => `${c.column_name as string} ${c.column_type as string}`);
    conn.closeSync();
    db.closeSync();
    expect(columns).toEqual(
      expect.arrayContaining([
        'interaction_id BIGINT',
        'kind VARCHAR',
        'identifier VARCHAR',
        'identifier_value VARCHAR',
        'interaction_type VARCHAR',
        'interaction_at TIMESTAMP WITH TIME ZONE',
        'status VARCHAR',
        'http_status INTEGER',
        'message VARCHAR',
        'attempted_at TIMESTAMP WITH TIME ZONE',
        '_extracted_at TIMESTAMP WITH TIME ZONE',
        '_run_id VARCHAR',
        'organisation_group_id BIGINT',
        '_snapshot_date DATE',
      ]),
    );
    const count = (status: string) => rows.filter((r) => r.status === status).reduce((n, r) => n + Number(r.n), 0);
    expect(count('pending')).toBe(6);
    expect(count('sent')).toBe(6);
    expect(rows.every((r) => r.run === result.run_id)).toBe(true);
    expect(fs.readdirSync(path.join(outDir, 'state', 'writeback')).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  });

  test('a dry run counts rows per type, shows the first ones and sends nothing', async () => {
    const { run, outDir, marts } = await setup();
    const calls = sandbox().stats().calls;
    const result = await run({ dryRun: true, previewRows: 3 });
    expect(sandbox().stats().calls).toBe(calls);
    expect(result.sent).toBe(0);
    expect(result.by_type).toEqual([
      {
        kind: 'savings_milestone',
        interaction_type: 'savings_milestone',
        rows: marts.savings.length / 2,
        to_send: marts.savings.length / 2,
      },
      {
        kind: 'segment_change',
        interaction_type: 'segment_change',
        rows: marts.users.length,
        to_send: marts.users.length,
      },
    ]);
    expect(result.preview).toHaveLength(3);
    expect(fs.existsSync(path.join(outDir, 'lake', 'writeback_ledger'))).toBe(false);
    expect(fs.existsSync(path.join(outDir, 'state', 'writeback'))).toBe(false);
  });

  test('a row the sandbox refuses is recorded as rejected with its status and not retried; the others go through', async () => {
    const marts = martsFromSandbox(sandbox());
    marts.users.push({ organisation_group_id: 11, user_id: 987_654_321, segment: 'active' }); // unknown to the platform
    const { run } = await setup(marts);
    const first = await run();
    expect(first.status).toBe('partial');
    expect(first.rejected).toBe(1);
    expect(first.rejections[0]).toMatchObject({ identifier_value: '987654321', http_status: 404 });
    expect(first.sent).toBe(first.rows - 1);
    const second = await run();
    expect(second).toMatchObject({ sent: 0, rejected: 0, skipped_rejected: 1, calls: 0 });
  });

  test('--limit caps a run and the next run sends the rest', async () => {
    const { run, marts } = await setup();
    const total = marts.users.length + marts.savings.length / 2;
    const first = await run({ limit: 5 });
    expect(first).toMatchObject({ sent: 5, deferred: total - 5 });
    const second = await run();
    expect(second).toMatchObject({ sent: total - 5, skipped_already_sent: 5, deferred: 0 });
  });

  test("configured interaction types replace the models' defaults", async () => {
    const { run } = await setup();
    const result = await run({ dryRun: true, types: { segment_change: 'engagement_segment' } });
    expect(result.by_type.map((t) => t.interaction_type)).toEqual(['savings_milestone', 'engagement_segment']);
  });

  test("a user's next segment change is a new interaction; an unchanged segment sends nothing", async () => {
    const { run, outDir, marts } = await setup();
    await run();
    const moved = marts.users[0];
    const next = { ...marts, users: marts.users.map((u) => (u === moved ? { ...u, segment: 'churned' } : u)) };
    await writeMarts(outDir, next);
    const second = await run();
    expect(second.sent).toBe(1);
    const id = interactionId(moved.organisation_group_id, moved.user_id, 'segment_change', 2, 'churned');
    expect(storedTimes(sandbox()).get(String(id))).toBe(1);
    const stored = [...sandbox().world.interactionsOf(sandbox().world.users.get(moved.user_id)!)].find(
      (i) => i.interaction_id === String(id),
    );
    expect(stored?.interaction_details).toEqual({
      segment: 'churned',
      previous_segment: moved.segment,
      change_number: 2,
    });
    expect((await run()).sent).toBe(0);
  });
});
