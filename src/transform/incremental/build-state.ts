/**
 * What each model was last built from, kept INSIDE the warehouse (table `_build_state`), so it is
 * swapped in with the rows it describes or not at all: a build that fails or is killed leaves the previous
 * warehouse and the previous state together. Per model: its SQL's hash, the hash of the settings it reads
 * (`getvariable(…)`), each lake group-month's fingerprint, each upstream model's fingerprint per group (built by
 * intervals), or what it read (the others); and its version.
 * The state's JSON has snake_case keys (`exported_file`, `lookup_rows`; docs/reference/operations.md, "JSON keys");
 * a state an earlier release wrote in camelCase is read the same, so its warehouse still builds incrementally.
 */
import { createHash } from 'node:crypto';
import { quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import { camelKeys, snakeJson, type KeyRules } from '../../shared/json-keys.js';

export const STATE_TABLE = '_build_state';

export interface ModelState {
  sql: string;
  settings: string;
  /** `<stream>/<group>/<YYYY-MM>` → fingerprint of the group-month's files (lake-partitions.ts). */
  partitions: Record<string, string>;
  /** upstream model → group (or `*`) → count and hash of its rows. */
  inputs: Record<string, Record<string, string>>;
  /**
   * A mart exported by months (export-months.ts): the token its month folder was written under with this
   * state; a folder under another token is not this warehouse's, and is written whole.
   */
  exported?: string;
  /**
   * A model kept by month in the seed (seed.ts): the token its seed folder was written under with this state;
   * a folder under another token is written whole.
   */
  seed?: string;
  /** A mart: the token in the footer of its whole file (`marts/<mart>.parquet`) as this state describes it. */
  exportedFile?: string;
  /**
   * A model not built by intervals: the fingerprint of each source and the version of each model it read
   * (model-versions.ts).
   */
  reads?: Record<string, string>;
  /** Its version as built (model-versions.ts): unchanged while what it read is. */
  version?: string;
  /**
   * A model built by intervals from the lake, with lookups: `<lookup model>|<stream>/<group>/<YYYY-MM>` → the
   * fingerprint of the lake group-month whose lookup keys `_build_lookup_rows_<model>` holds (lookups.ts).
   */
  lookupRows?: Record<string, string>;
}

/** The keys that are data: partitions, model names, groups, sources. */
export const STATE_KEYS: KeyRules = { dataKeys: ['partitions', 'inputs', 'inputs.*', 'reads', 'lookupRows'] };

export const sha = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The states recorded in the database `conn` opened (none: an empty map). */
export async function readStates(conn: DuckDBConnection): Promise<Map<string, ModelState>> {
  const states = new Map<string, ModelState>();
  const exists = await conn.runAndReadAll(
    `SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = ${str(STATE_TABLE)}`,
  );
  if (Number(exists.getRowObjectsJson()[0].n) === 0) return states;
  const rows = (await conn.runAndReadAll(`SELECT model, state FROM ${STATE_TABLE}`)).getRowObjectsJson() as {
    model: string;
    state: string;
  }[];
  for (const row of rows) {
    try {
      states.set(row.model, camelKeys(JSON.parse(row.state), STATE_KEYS) as ModelState); // either spelling
    } catch {
      // a state that cannot be read is no state: that model is built whole
    }
  }
  return states;
}

/** Replaces the recorded states by `states` (in the new database, before it is swapped in). */
export async function writeStates(conn: DuckDBConnection, states: Map<string, ModelState>): Promise<void> {
  await conn.run(`CREATE OR REPLACE TABLE ${STATE_TABLE} (model VARCHAR, state VARCHAR)`);
  for (const [model, state] of states)
    await conn.run(`INSERT INTO ${STATE_TABLE} VALUES ($model, $state)`, {
      model,
      state: snakeJson(state, STATE_KEYS),
    });
}

/** The hash of the values of the variables the SQL reads (`getvariable('as_of')`, …): a change rebuilds the model. */
export async function settingsHash(conn: DuckDBConnection, sql: string): Promise<string> {
  const names = [...new Set([...sql.matchAll(/getvariable\(\s*'([^']+)'\s*\)/gi)].map((m) => m[1]))].sort();
  const values: string[] = [];
  for (const name of names) {
    const r = await conn.runAndReadAll(`SELECT CAST(getvariable(${str(name)}) AS VARCHAR) AS v`);
    values.push(`${name}=${(r.getRowObjectsJson() as { v: string | null }[])[0].v}`);
  }
  return sha(values.join('\n'));
}
