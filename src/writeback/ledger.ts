/**
 * The ledger: every outcome of every row the write-back ever tried. Two halves, one table:
 * - the journal segments under `<out>/state/writeback/` (write-ahead, fsync'd, crash-safe), and
 * - the Parquet table `writeback_ledger` of the lake, a snapshot stream (`part-<run_id>-0.parquet` per group and
 *   day; lake contract), which closed segments are compacted into.
 * The view `lake_writeback_ledger` reads both. A row's state: 'sent' if any entry says sent, else the status of
 * its latest entry: 'rejected' (not stored) or 'pending' ("maybe posted"). Latest, not any: a rejected row
 * posted again by --retry-rejected is pending again until its new answer is recorded.
 */
import fs from 'node:fs';
import { quotedString } from '../shared/duckdb.js';
import { appendPartition, scanSql, snapshotPartition, streamDir, streamFiles } from '../lake/index.js';
import type { Db } from './db.js';
import { fileList, isoOf } from './db.js';
import { fsyncPathSync } from '../shared/durable-file.js';
import { journalSegments } from './journal.js';
import { LedgerEntry, SETTLED_MESSAGE, type LedgerStatus } from './rows.js';
import { outputAt } from '../output/index.js';

/** The name the model runner gives the stream's view (lake_<stream>), so models run the same in both places. */
export const LEDGER_VIEW = 'lake_writeback_ledger';

/** The ledger's stream in the lake. */
const LEDGER_STREAM = 'writeback_ledger';

export function ledgerDirs(outDir: string): { lake: string; state: string } {
  return { lake: streamDir(outDir, LEDGER_STREAM), state: outputAt(outDir).state('writeback') };
}

/** Journal line fields and their DuckDB types (the ledger's columns, partition columns included). */
const JOURNAL_COLUMNS = `{interaction_id: 'BIGINT', organisation_group_id: 'BIGINT', identifier: 'VARCHAR',
  identifier_value: 'VARCHAR', kind: 'VARCHAR', interaction_type: 'VARCHAR', interaction_at: 'TIMESTAMPTZ',
  interaction_details: 'JSON', status: 'VARCHAR', http_status: 'INTEGER', message: 'VARCHAR',
  attempted_at: 'TIMESTAMPTZ', _run_id: 'VARCHAR'}`;

const COLUMNS = `interaction_id::BIGINT AS interaction_id, organisation_group_id::BIGINT AS organisation_group_id,
  identifier, identifier_value, kind, interaction_type, interaction_at::TIMESTAMPTZ AS interaction_at,
  interaction_details::JSON AS interaction_details, status, http_status::INTEGER AS http_status, message,
  attempted_at::TIMESTAMPTZ AS attempted_at, _run_id`;

function journalSql(files: string[]): string {
  return `SELECT ${COLUMNS} FROM read_json(${fileList(files)}, format = 'newline_delimited', columns = ${JOURNAL_COLUMNS}, ignore_errors = true)
    WHERE interaction_id IS NOT NULL AND status IS NOT NULL`;
}

/** (Re)creates the `writeback_ledger` view over the Parquet table and every journal segment. */
export async function createLedgerView(db: Db, outDir: string): Promise<void> {
  const dirs = ledgerDirs(outDir);
  const parts: string[] = [];
  const parquet = streamFiles(outDir, LEDGER_STREAM);
  if (parquet.length) parts.push(`SELECT ${COLUMNS} FROM ${scanSql(fileList(parquet))}`);
  const segments = journalSegments(dirs.state).map((s) => s.path);
  if (segments.length) parts.push(journalSql(segments));
  if (!parts.length)
    parts.push(`SELECT ${COLUMNS} FROM (SELECT NULL AS interaction_id, NULL AS organisation_group_id, NULL AS identifier,
    NULL AS identifier_value, NULL AS kind, NULL AS interaction_type, NULL AS interaction_at, NULL AS interaction_details,
    NULL AS status, NULL AS http_status, NULL AS message, NULL AS attempted_at, NULL AS _run_id) WHERE false`);
  await db.conn.run(`CREATE OR REPLACE TEMP VIEW ${LEDGER_VIEW} AS ${parts.join('\nUNION ALL BY NAME\n')}`);
}

export interface LedgerState {
  status: Map<number, LedgerStatus>;
  /** Rejected rows the operator settled (--settle-pending-as-rejected): never posted again, not even by --retry-rejected. */
  settled: Set<number>;
  /** The latest entry of each row left pending (a crash, or a call that never got an answer). */
  pending: LedgerEntry[];
  /** The interaction_type each rejected row was last rejected as. */
  rejectedAs: Map<number, string>;
  /** The latest entry's `attempted_at` (ms), -Infinity for an empty ledger: the ledger's clock starts after it. */
  latest: number;
}

/** Every row's state, from the view (create it first). */
export async function readLedgerState(db: Db): Promise<LedgerState> {
  const rows = await db.all(`
    WITH entries AS (
      SELECT *, row_number() OVER (PARTITION BY interaction_id ORDER BY attempted_at DESC) AS recency FROM ${LEDGER_VIEW}
    ), state AS (
      SELECT interaction_id,
        CASE WHEN bool_or(status = 'sent') THEN 'sent' ELSE max(status) FILTER (WHERE recency = 1) END AS state,
        bool_or(status = 'rejected' AND message = ${quotedString(SETTLED_MESSAGE)}) AS settled
      FROM entries GROUP BY interaction_id
    )
    SELECT s.state, s.settled, e.interaction_id, e.organisation_group_id, e.identifier, e.identifier_value, e.kind, e.interaction_type,
      ${isoOf('e.interaction_at')} AS interaction_at, e.interaction_details::VARCHAR AS interaction_details, e.status,
      e.http_status, e.message, ${isoOf('e.attempted_at')} AS attempted_at, e._run_id
    FROM state AS s JOIN entries AS e ON e.interaction_id = s.interaction_id AND e.recency = 1`);
  const status = new Map<number, LedgerStatus>();
  const settled = new Set<number>();
  const pending: LedgerEntry[] = [];
  const rejectedAs = new Map<number, string>();
  let latest = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    const id = Number(r.interaction_id);
    latest = Math.max(latest, Date.parse(String(r.attempted_at)));
    status.set(id, r.state as LedgerStatus);
    if (r.state === 'pending') pending.push(toEntry(r));
    if (r.state === 'rejected' && r.settled === true) settled.add(id);
    if (r.state === 'rejected') rejectedAs.set(id, String(r.interaction_type));
  }
  return { status, settled, pending, rejectedAs, latest };
}

export function toEntry(r: Record<string, unknown>): LedgerEntry {
  return LedgerEntry.parse({
    ...r,
    interaction_id: Number(r.interaction_id),
    organisation_group_id: Number(r.organisation_group_id),
    http_status: r.http_status === null || r.http_status === undefined ? null : Number(r.http_status),
    interaction_details:
      typeof r.interaction_details === 'string'
        ? (JSON.parse(r.interaction_details) as unknown)
        : (r.interaction_details ?? {}),
  });
}

/**
 * Turns closed journal segments (all but `keepRunId`'s) into Parquet files, one per group and UTC day
 * of attempted_at, then deletes the segment. Idempotent: file names come from the segment, so after a
 * crash between writing the files and deleting the segment the files already in place are kept as they
 * are (each was complete before its rename), never rewritten under a name a reader may have open.
 */
export async function compactJournals(db: Db, outDir: string, keepRunId?: string): Promise<number> {
  const dirs = ledgerDirs(outDir);
  let entries = 0;
  for (const segment of journalSegments(dirs.state)) {
    if (segment.runId === keepRunId) continue;
    const source = `(${journalSql([segment.path])})`;
    const partitions =
      await db.all(`SELECT organisation_group_id AS g, strftime(timezone('UTC', attempted_at), '%Y-%m-%d') AS d, count(*) AS n
      FROM ${source} GROUP BY ALL ORDER BY ALL`);
    for (const p of partitions) {
      entries += Number(p.n);
      // file names come from the segment: one already in place is kept (appendPartition)
      await appendPartition(
        outDir,
        LEDGER_STREAM,
        snapshotPartition(Number(p.g), String(p.d)),
        `part-${segment.runId}-0`,
        (temp) =>
          db.conn
            .run(
              `COPY (SELECT interaction_id, kind, identifier, identifier_value, interaction_type, interaction_at, interaction_details,
            status, http_status, message, attempted_at, attempted_at AS _extracted_at, _run_id
          FROM ${source} WHERE organisation_group_id = $g AND strftime(timezone('UTC', attempted_at), '%Y-%m-%d') = $d
          ORDER BY attempted_at, interaction_id) TO ${quotedString(temp)} (FORMAT parquet, COMPRESSION zstd)`,
              { g: Number(p.g), d: String(p.d) },
            )
            .then(() => undefined),
      );
    }
    fs.unlinkSync(segment.path);
    fsyncPathSync(dirs.state, { folder: true });
  }
  return entries;
}
