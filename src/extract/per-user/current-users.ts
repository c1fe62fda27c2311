/**
 * The group's current users, read back from the lake's latest users snapshot: the per-user streams
 * and the redemption-stats batches are planned from them.
 */
import { globUnder, scanSql, streamDir, withLakeConnection } from '../../lake/index.js';
import type { CurrentUser } from './user-selection.js';
import { hasParquet } from '../landing/lake-files.js';

export async function currentUsers(outDir: string, group: number): Promise<CurrentUser[]> {
  const dir = streamDir(outDir, 'users', group);
  if (!hasParquet(dir)) return [];
  return withLakeConnection(async (connection) => {
    const glob = globUnder(dir, '*', '*.parquet');
    const reader = await connection.runAndReadAll(
      `WITH snap AS (
         SELECT *, _snapshot_date::DATE AS snap FROM ${scanSql('$glob')}
       )
       SELECT id::BIGINT AS id, lower(email) AS email, status, login_count::BIGINT AS login_count,
              strftime(last_login, '%Y-%m-%dT%H:%M:%S') AS last_login,
              strftime(updated_at, '%Y-%m-%dT%H:%M:%S') AS updated_at,
              strftime(deleted_at, '%Y-%m-%dT%H:%M:%S') AS deleted_at
       FROM snap WHERE snap = (SELECT max(snap) FROM snap)
       QUALIFY row_number() OVER (PARTITION BY id ORDER BY _extracted_at DESC) = 1
       ORDER BY id`,
      { glob },
    );
    return reader.getRowObjectsJS().map((r: Record<string, unknown>) => ({
      id: Number(r.id),
      email: (r.email as string | null) ?? null,
      status: (r.status as string | null) ?? null,
      login_count: r.login_count === null ? null : Number(r.login_count),
      last_login: (r.last_login as string | null) ?? null,
      updated_at: (r.updated_at as string | null) ?? null,
      deleted_at: (r.deleted_at as string | null) ?? null,
    }));
  });
}
