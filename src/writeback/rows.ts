/**
 * What the write-back sends (a row of a sql/writeback model) and what it records (a ledger entry).
 * The interaction id rule lives here too, mirrored by the SQL models.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Prefix of every hashed key: change it only together with every model, or ids change. */
export const ID_NAMESPACE = 'perks-writeback-v1';

/**
 * The deterministic interaction id of a fact: the first 13 hex digits (52 bits, a safe JS integer) of
 * md5('perks-writeback-v1:' || parts joined by ':'). The SQL models compute the same with
 * `('0x' || left(md5(concat_ws(':', 'perks-writeback-v1', …)), 13))::BIGINT`.
 */
export function interactionId(...parts: (string | number)[]): number {
  const hex = createHash('md5')
    .update([ID_NAMESPACE, ...parts].join(':'))
    .digest('hex');
  return Number.parseInt(hex.slice(0, 13), 16);
}

const isoInstant = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected a timestamp');

/** One row of a write-back model: one interaction to send. */
export const WritebackRow = z.object({
  interaction_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  organisation_group_id: z.number().int(),
  identifier: z.enum(['id', 'email', 'UID']),
  identifier_value: z.string().min(1),
  kind: z.string().min(1),
  interaction_type: z.string().min(1),
  interaction_at: isoInstant,
  interaction_details: z.record(z.string(), z.unknown()),
});
export type WritebackRow = z.infer<typeof WritebackRow>;

/** The message of a pending row the operator settled as rejected (--settle-pending-as-rejected). */
export const SETTLED_MESSAGE =
  'settled as rejected by the operator (--settle-pending-as-rejected): whether it was stored is unknown; never posted again';

export const LedgerStatus = z.enum(['pending', 'sent', 'rejected']);
export type LedgerStatus = z.infer<typeof LedgerStatus>;

/** One line of the journal and one row of the ledger table: a row and what happened to it. */
export const LedgerEntry = WritebackRow.extend({
  status: LedgerStatus,
  http_status: z.number().int().nullable(),
  message: z.string().nullable(),
  attempted_at: isoInstant,
  _run_id: z.string(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** Who records an entry: the run, and its ledger clock (ledger-clock.ts), which stamps `attempted_at`. */
export interface EntryStamp {
  readonly runId: string;
  stamp(): string;
}

export function entryOf(
  row: WritebackRow,
  status: LedgerStatus,
  by: EntryStamp,
  outcome: { http_status?: number | null; message?: string | null } = {},
): LedgerEntry {
  return {
    interaction_id: row.interaction_id,
    organisation_group_id: row.organisation_group_id,
    identifier: row.identifier,
    identifier_value: row.identifier_value,
    kind: row.kind,
    interaction_type: row.interaction_type,
    interaction_at: row.interaction_at,
    interaction_details: row.interaction_details,
    status,
    http_status: outcome.http_status ?? null,
    message: outcome.message ?? null,
    attempted_at: by.stamp(),
    _run_id: by.runId,
  };
}

/** The row part of a ledger entry (what to post again). */
export function rowOf(entry: LedgerEntry): WritebackRow {
  return WritebackRow.parse(entry);
}
