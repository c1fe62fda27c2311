/**
 * `perks writeback --verify`: reconciles the ledger with what the platform holds. Each row the ledger
 * says was sent is looked for in the landed interactions stream (`<out>/lake/interactions/`); a row the
 * lake cannot decide (its user's interactions were last extracted before it was sent, or no stream yet)
 * is looked up through the API when a client is given. What neither finds is reported as missing.
 * Both stamps compared are the program's clock, kept in order across the directory's runs (the ledger's
 * `attempted_at`: ledger-clock.ts; the lake's `_extracted_at`: lake/run-stamps.ts), so the lake decides after
 * a real extract whatever the clock: the system's, or a PERKS_NOW that restarts every process at one instant.
 */
import type { PerksClient } from '../api/index.js';
import { fileList, isoOf, openDb } from './db.js';
import { createLedgerView, LEDGER_VIEW } from './ledger.js';
import { byUser, findUpstream } from './upstream.js';
import { streamFiles, scanSql } from '../lake/index.js';
import type { Output } from '../output/index.js';

export interface SentRow {
  interaction_id: number;
  organisation_group_id: number;
  identifier: string;
  identifier_value: string;
  kind: string;
  interaction_at: string;
  attempted_at: string;
}

export interface VerifyResult {
  /** Rows the ledger says were sent. */
  sent: number;
  seen_in_lake: number;
  seen_via_api: number;
  /** Sent but not seen upstream, with where they were looked for. */
  missing: (SentRow & { checked: 'lake' | 'api' })[];
  /** Neither the lake nor the API could tell (no client given). */
  unchecked: number;
}

/** `output`: the command's Output (its folder is absolute); `client`: the API, for the rows the lake cannot decide. */
export async function verifyWriteback(options: { output: Output; client?: PerksClient }): Promise<VerifyResult> {
  const outDir = options.output.dir;
  const db = await openDb();
  try {
    await createLedgerView(db, outDir);
    const lakeFiles = streamFiles(outDir, 'interactions');
    const lake = lakeFiles.length
      ? scanSql(fileList(lakeFiles), { autocast: false })
      : `(SELECT NULL::BIGINT AS organisation_group_id, NULL::VARCHAR AS interaction_id, NULL::BIGINT AS user_id, ` +
        `NULL::TIMESTAMPTZ AS _extracted_at WHERE false)`;
    const rows = await db.all(`
      WITH sent AS (
        SELECT * FROM ${LEDGER_VIEW} WHERE status = 'sent'
        QUALIFY row_number() OVER (PARTITION BY interaction_id ORDER BY attempted_at) = 1
      ), landed AS (
        SELECT organisation_group_id::BIGINT AS organisation_group_id, interaction_id::VARCHAR AS interaction_id,
          user_id::BIGINT AS user_id, _extracted_at::TIMESTAMPTZ AS _extracted_at FROM ${lake}
      ), extracted AS (
        SELECT organisation_group_id, user_id::VARCHAR AS user_key, max(_extracted_at) AS last_extracted FROM landed GROUP BY ALL
      )
      SELECT s.interaction_id, s.organisation_group_id, s.identifier, s.identifier_value, s.kind,
        ${isoOf('s.interaction_at')} AS interaction_at, ${isoOf('s.attempted_at')} AS attempted_at,
        EXISTS (SELECT 1 FROM landed AS l WHERE l.organisation_group_id = s.organisation_group_id AND l.interaction_id = s.interaction_id::VARCHAR) AS seen,
        coalesce(s.identifier = 'id' AND e.last_extracted > s.attempted_at, false) AS lake_decides
      FROM sent AS s LEFT JOIN extracted AS e ON s.identifier = 'id' AND e.organisation_group_id = s.organisation_group_id AND e.user_key = s.identifier_value
      ORDER BY s.organisation_group_id, s.interaction_id`);
    const result: VerifyResult = { sent: rows.length, seen_in_lake: 0, seen_via_api: 0, missing: [], unchecked: 0 };
    const undecided: SentRow[] = [];
    for (const r of rows) {
      const row: SentRow = {
        interaction_id: Number(r.interaction_id),
        organisation_group_id: Number(r.organisation_group_id),
        identifier: String(r.identifier),
        identifier_value: String(r.identifier_value),
        kind: String(r.kind),
        interaction_at: String(r.interaction_at),
        attempted_at: String(r.attempted_at),
      };
      if (r.seen) result.seen_in_lake += 1;
      else if (r.lake_decides) result.missing.push({ ...row, checked: 'lake' });
      else undecided.push(row);
    }
    if (!options.client) {
      result.unchecked = undecided.length;
      return result;
    }
    for (const user of byUser(undecided)) {
      const found = await findUpstream(options.client, {
        ...user[0],
        ids: user.map((r) => r.interaction_id),
        around: user.flatMap((r) => [Date.parse(r.interaction_at), Date.parse(r.attempted_at)]),
      });
      for (const row of user) {
        if (found.has(row.interaction_id)) result.seen_via_api += 1;
        else result.missing.push({ ...row, checked: 'api' });
      }
    }
    return result;
  } finally {
    db.close();
  }
}
