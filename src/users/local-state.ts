/**
 * A user's state as the output directory knows it: the lake's latest users snapshot of the group (the
 * output contract's `lake/users`), overlaid by the audit log's accepted transitions made on top of that
 * same snapshot (each entry names the snapshot run it saw: its basis). A newer snapshot supersedes the
 * entries made before it; no clock is compared. Read only; nothing is sent.
 */
import { existsSync, readdirSync } from 'node:fs';
import { globUnder, scanSql, streamDir, withLakeConnection } from '../lake/index.js';
import { readAudit } from './audit.js';
import type { Address } from './address.js';
import { stateOfStatus, type LocalView } from './lifecycle.js';

function hasParquet(dir: string): boolean {
  if (!existsSync(dir)) return false;
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.parquet'));
}

interface SnapshotRow {
  id: number;
  group: number;
  status: string | null;
  runId: string;
  day: string;
}

async function snapshotRow(
  outDir: string,
  address: Address,
  group: number | undefined,
): Promise<SnapshotRow | undefined> {
  const root = streamDir(outDir, 'users');
  if (!hasParquet(root)) return undefined;
  const where =
    address.identifier === 'id'
      ? 'id = TRY_CAST($value AS BIGINT)'
      : address.identifier === 'email'
        ? 'lower(email) = lower($value)'
        : 'UID = $value';
  return withLakeConnection(async (c) => {
    const reader = await c.runAndReadAll(
      `WITH u AS (
         SELECT *, organisation_group_id::BIGINT AS g, _snapshot_date::DATE AS snap
         FROM ${scanSql('$glob')}
       ), latest AS (
         SELECT * FROM u WHERE snap = (SELECT max(x.snap) FROM u AS x WHERE x.g = u.g)
       )
       SELECT id::BIGINT AS id, g, status, _run_id AS run_id, snap::VARCHAR AS day
       FROM latest WHERE ${where} AND ($group IS NULL OR g = $group)
       QUALIFY row_number() OVER (PARTITION BY g, id ORDER BY _extracted_at DESC) = 1
       ORDER BY g, id`,
      { glob: globUnder(root, '**', '*.parquet'), value: address.value, group: group ?? null },
    );
    const rows = reader.getRowObjectsJS() as Record<string, unknown>[];
    if (rows.length !== 1) return undefined; // unknown, or the same address in several groups: the platform decides
    const r = rows[0];
    return {
      id: Number(r.id),
      group: Number(r.g),
      status: (r.status as string | null) ?? null,
      runId: String(r.run_id),
      day: String(r.day),
    };
  });
}

/** The run id of the group's latest users snapshot (every group's when none is named), or null. */
export async function snapshotBasis(outDir: string, group: number | undefined): Promise<string | null> {
  const root = streamDir(outDir, 'users');
  if (!hasParquet(root)) return null;
  return withLakeConnection(async (c) => {
    const reader = await c.runAndReadAll(
      `SELECT _run_id AS run_id FROM ${scanSql('$glob')}
       WHERE $group IS NULL OR organisation_group_id::BIGINT = $group
       ORDER BY _snapshot_date::DATE DESC, _extracted_at DESC LIMIT 1`,
      { glob: globUnder(root, '**', '*.parquet'), group: group ?? null },
    );
    const rows = reader.getRowObjectsJS() as Record<string, unknown>[];
    return rows.length ? String(rows[0].run_id) : null;
  });
}

export interface LocalUser extends LocalView {
  /** The snapshot run the local state rests on: what an audit entry made now names as its basis. */
  basis: string | null;
}

export async function localUser(
  outDir: string,
  address: Address,
  group: number | undefined,
): Promise<LocalUser | undefined> {
  const row = await snapshotRow(outDir, address, group);
  const id = row?.id ?? (address.identifier === 'id' ? Number(address.value) : undefined);
  const basis = row ? await snapshotBasis(outDir, row.group) : await snapshotBasis(outDir, group);
  if (id === undefined) return undefined;
  let view: LocalUser | undefined = row && {
    id,
    basis,
    state: stateOfStatus(row.status),
    source: `the users snapshot of ${row.day}`,
  };
  for (const e of await readAudit(outDir)) {
    if (e.user_id !== id || e.outcome !== 'ok' || !e.state_after || (e.basis ?? null) !== basis) continue;
    if (group !== undefined && e.group !== undefined && e.group !== group) continue;
    view = { id, basis, state: e.state_after, source: `audited ${e.command} at ${e.at}` };
  }
  return view ?? { id, basis, source: 'nothing local' };
}
