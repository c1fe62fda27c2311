import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';
import { describe, expect, test } from 'vitest';
import { verifyWriteback, type WritebackRow } from '../../src/writeback/index.js';
import { nextRunStamp } from '../../src/lake/index.js';
import { now } from '../../src/shared/clock.js';
import { prepare, sandboxPerTest } from './fixtures.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxPerTest();

async function sentRun() {
  const { outDir, client, run } = await prepare(sandbox());
  const rows = (await run({ dryRun: true, previewRows: 100_000 })).preview;
  // An instant before every post, on the program's clock (the ledger's: src/writeback/ledger-clock.ts).
  const beforeSending = new Date(now().getTime() - 1);
  await run();
  return { outDir, client, rows, beforeSending };
}

/** Lands interactions as the extract does: `<out>/lake/interactions/organisation_group_id=…/_snapshot_date=…/`. */
async function landInteractions(outDir: string, rows: WritebackRow[], extractedAt: string) {
  const json = path.join(outDir, 'landed.json');
  fs.writeFileSync(
    json,
    rows
      .map((r) =>
        JSON.stringify({
          organisation_group_id: r.organisation_group_id,
          interaction_id: String(r.interaction_id),
          user_id: Number(r.identifier_value),
        }),
      )
      .join('\n'),
  );
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(`COPY (SELECT *, ${quotedString(extractedAt)}::TIMESTAMPTZ AS _extracted_at, 'x' AS _run_id, DATE '2026-11-22' AS _snapshot_date
      FROM read_json(${quotedString(json)}, format = 'newline_delimited', columns = {organisation_group_id: 'BIGINT', interaction_id: 'VARCHAR', user_id: 'BIGINT'}))
    TO ${quotedString(path.join(outDir, 'lake', 'interactions'))} (FORMAT parquet, PARTITION_BY (organisation_group_id, _snapshot_date))`);
  conn.closeSync();
  instance.closeSync();
}

describe('perks writeback --verify', () => {
  test('a row sent but absent from interactions extracted after it is reported missing', async () => {
    const { outDir, rows } = await sentRun();
    // A milestone whose user's segment change did land: that user was extracted after both were sent.
    const lost = rows.find((r) => r.kind === 'savings_milestone')!;
    const landed = rows.filter((r) => r !== lost);
    // stamped as an extract starting now would stamp (after the directory's stamps, the write-back's included);
    // test/writeback/verify-after-extract.test.ts runs the real extract
    await landInteractions(outDir, landed, (await nextRunStamp(outDir, now())).toISOString());
    const result = await verifyWriteback({ output: outputAt(outDir) });
    expect(result).toMatchObject({ sent: rows.length, seen_in_lake: rows.length - 1, unchecked: 0 });
    expect(result.missing).toEqual([expect.objectContaining({ interaction_id: lost.interaction_id, checked: 'lake' })]);
  });

  test('a row sent after its user was last extracted is not called missing without asking the API', async () => {
    const { outDir, rows, beforeSending } = await sentRun();
    const lost = rows.find((r) => r.kind === 'savings_milestone')!;
    await landInteractions(
      outDir,
      rows.filter((r) => r !== lost),
      beforeSending.toISOString(),
    );
    const result = await verifyWriteback({ output: outputAt(outDir) });
    expect(result).toMatchObject({ seen_in_lake: rows.length - 1, missing: [], unchecked: 1 });
  });

  test('rows the lake cannot decide are looked up through the API, and one the platform lacks is missing', async () => {
    const { outDir, client, rows } = await sentRun();
    // A ledger that claims a row was sent that never reached the platform.
    const ghost = {
      ...rows[0],
      interaction_id: 42,
      status: 'sent',
      http_status: null,
      message: null,
      attempted_at: now().toISOString(),
      _run_id: 'wb-ghost',
    };
    fs.writeFileSync(path.join(outDir, 'state', 'writeback', 'journal-wb-ghost.jsonl'), `${JSON.stringify(ghost)}\n`);
    const result = await verifyWriteback({ output: outputAt(outDir), client });
    expect(result).toMatchObject({ sent: rows.length + 1, seen_in_lake: 0, seen_via_api: rows.length });
    expect(result.missing).toEqual([expect.objectContaining({ interaction_id: 42, checked: 'api' })]);
  });
});
