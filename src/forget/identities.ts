/**
 * Who to forget and how to recognise them: every email address and name the lake's users snapshots
 * (the current one and every superseded one) ever held for the given user ids; and the users whose
 * latest snapshot shows them anonymised upstream while older files still hold their data.
 */
import { join } from 'node:path';
import { BIGINT, LIST, listValue, VARCHAR } from '@duckdb/node-api';
import { withLakeConnection } from '../lake/index.js';
import { lakeFiles } from './lake-files.js';

export interface Identities {
  ids: number[];
  /** Lower-case email addresses. */
  emails: string[];
  /** First and last names, for scrubbing quarantined raw records. */
  names: string[];
}

const usersGlob = (outDir: string) => join(outDir, 'lake', 'users', '**', '*.parquet');

export async function identitiesOf(outDir: string, ids: number[]): Promise<Identities> {
  const found: Identities = { ids, emails: [], names: [] };
  if (!ids.length) return found;
  const sources = [
    { stream: 'users', columns: 'lower(email) AS e, first_name AS f, last_name AS l' },
    { stream: 'redemption_stats', columns: 'lower(email) AS e, NULL AS f, NULL AS l' },
  ];
  await withLakeConnection(async (c) => {
    for (const s of sources) {
      if (!lakeFiles(outDir, s.stream).length) continue;
      const r = await c.runAndReadAll(
        `SELECT DISTINCT ${s.columns} FROM read_parquet($glob, union_by_name = true) WHERE list_contains($ids, id::BIGINT)`,
        { glob: join(outDir, 'lake', s.stream, '**', '*.parquet'), ids: listValue(ids.map(BigInt)) },
        { glob: VARCHAR, ids: LIST(BIGINT) },
      );
      for (const row of r.getRowObjectsJS()) {
        if (row.e) found.emails.push(String(row.e));
        for (const n of [row.f, row.l]) if (n) found.names.push(String(n));
      }
    }
  });
  found.emails = [...new Set(found.emails)];
  found.names = [...new Set(found.names)];
  return found;
}

/** Users whose latest snapshot has no email (anonymised: the API requires one otherwise) and whose older rows still hold one. */
export async function anonymisedUsers(outDir: string): Promise<number[]> {
  if (!lakeFiles(outDir, 'users').length) return [];
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `WITH u AS (
         SELECT organisation_group_id::BIGINT AS g, id::BIGINT AS id, email, first_name, last_name, _snapshot_date::DATE AS d, _extracted_at
         FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)
       ),
       latest AS (SELECT * FROM u QUALIFY row_number() OVER (PARTITION BY g, id ORDER BY d DESC, _extracted_at DESC) = 1)
       SELECT DISTINCT latest.id FROM latest JOIN u USING (g, id)
       WHERE latest.email IS NULL AND (u.email IS NOT NULL OR u.first_name IS NOT NULL OR u.last_name IS NOT NULL)
       ORDER BY 1`,
      { glob: usersGlob(outDir) },
    );
    return r.getRowObjectsJS().map((x) => Number(x.id));
  });
}
