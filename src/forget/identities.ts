/**
 * Who to forget and how to recognise them: the personal keys (src/lake/personal-keys.ts) of every
 * email address and name the lake's users snapshots (the current one and every superseded one) and
 * redemption statistics ever held for the given user ids, plus the keys an owed erasure kept for them
 * (a snapshot replaced since); and the users whose latest snapshot shows them anonymised upstream
 * while older files still hold their data.
 */
import { BIGINT, LIST, listValue, VARCHAR } from '../shared/duckdb.js';
import { personalKeySql, scanSql, streamFiles, streamGlob, withLakeConnection } from '../lake/index.js';

export interface Identities {
  ids: number[];
  /** personalKey() of each email address and name (a row of orders is the user's when its email's key is one of these). */
  keys: string[];
  /** How many distinct email addresses were found in the lake (what orders are recognised by). */
  emails: number;
}

const usersGlob = (outDir: string) => streamGlob(outDir, 'users');

export async function identitiesOf(outDir: string, ids: number[], owedKeys: string[] = []): Promise<Identities> {
  const emails = new Set<string>();
  const keys = new Set(owedKeys);
  if (!ids.length) return { ids, keys: [], emails: 0 };
  // Keys are computed by DuckDB, as the scrub that matches them is: one lower() and one trim for both sides.
  const key = personalKeySql;
  const sources = [
    { stream: 'users', columns: `${key('email')} AS e, ${key('first_name')} AS f, ${key('last_name')} AS l` },
    { stream: 'redemption_stats', columns: `${key('email')} AS e, NULL AS f, NULL AS l` },
  ];
  await withLakeConnection(async (c) => {
    for (const s of sources) {
      if (!streamFiles(outDir, s.stream).length) continue;
      const r = await c.runAndReadAll(
        `SELECT DISTINCT ${s.columns} FROM ${scanSql('$glob')} WHERE list_contains($ids, id::BIGINT)`,
        { glob: streamGlob(outDir, s.stream), ids: listValue(ids.map(BigInt)) },
        { glob: VARCHAR, ids: LIST(BIGINT) },
      );
      for (const row of r.getRowObjectsJS() as Record<'e' | 'f' | 'l', string | null>[]) {
        if (row.e) emails.add(String(row.e));
        for (const k of [row.e, row.f, row.l]) if (k) keys.add(String(k));
      }
    }
  });
  return { ids, keys: [...keys], emails: emails.size };
}

/** Users whose latest snapshot has no email (anonymised: the API requires one otherwise) and whose older rows still hold one. */
export async function anonymisedUsers(outDir: string, groups?: number[]): Promise<number[]> {
  if (!streamFiles(outDir, 'users').length) return [];
  const only = groups ? `WHERE latest.g IN (${groups.map((g) => Number(g)).join(', ')})` : '';
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `WITH u AS (
         SELECT organisation_group_id::BIGINT AS g, id::BIGINT AS id, email, first_name, last_name, _snapshot_date::DATE AS d, _extracted_at
         FROM ${scanSql('$glob')}
       ),
       latest AS (SELECT * FROM u QUALIFY row_number() OVER (PARTITION BY g, id ORDER BY d DESC, _extracted_at DESC) = 1)
       SELECT DISTINCT latest.id FROM (SELECT * FROM latest ${only}) AS latest JOIN u USING (g, id)
       WHERE latest.email IS NULL AND (u.email IS NOT NULL OR u.first_name IS NOT NULL OR u.last_name IS NOT NULL)
       ORDER BY 1`,
      { glob: usersGlob(outDir) },
    );
    return r.getRowObjectsJS().map((x) => Number(x.id));
  });
}
