/**
 * ClickHouse's engine in the test process: chdb (the ClickHouse library, embedded), loaded from the folder
 * scripts/test-prereqs.mjs installs it in, never from the project's node_modules (its native library is about
 * 540 MB: the newcomer's `npm ci` stays without it). It reads Parquet over the S3 API with the code a ClickHouse
 * server runs, so a read that works here is the read a ClickHouse cluster makes of the same bucket.
 * Queries run off the event loop (queryAsync): the S3 server a test reads from may answer in this very process.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { tempOut } from './scratch.js';

interface ChdbSession {
  queryAsync(sql: string, opts?: { format?: string }): Promise<{ text(): string }>;
  close(): void;
}

interface ChdbModule {
  Session: new (path?: string) => ChdbSession;
}

export interface ClickHouse {
  /** The rows of `sql` (JSONEachRow: decimals and 64-bit integers as perks sql's JSON gives them). */
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** A statement's answer as text (DDL, INSERT). */
  run(sql: string): Promise<string>;
  close(): void;
}

/** The version scripts/chdb/package.json pins. */
export const CHDB_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'scripts', 'chdb', 'package.json'), 'utf8')) as {
    dependencies: { chdb: string };
  }
).dependencies.chdb;

/** Where scripts/test-prereqs.mjs installs it: the user's cache, one folder per version (npm ci keeps it). */
export function chdbDir(): string {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'perks-test', `chdb-${CHDB_VERSION}`);
}

/**
 * The JSON output that says a value as `perks sql --format json` does: a decimal with its two places
 * (`0.80`, in quotes), an Int64 as a number.
 */
const JSON_LIKE_PERKS = {
  output_format_decimal_trailing_zeros: 1,
  output_format_json_quote_decimals: 1,
  output_format_json_quote_64bit_integers: 0,
};

/** A ClickHouse session (its folder a temporary one), or an Error saying how to install chdb. */
export async function startClickHouse(): Promise<ClickHouse> {
  const dir = chdbDir();
  if (!existsSync(join(dir, 'node_modules', 'chdb', 'package.json')))
    throw new Error(
      `chdb ${CHDB_VERSION} (ClickHouse's engine) is not installed in ${dir}: run node scripts/test-prereqs.mjs ` +
        '(npm test runs it; it installs chdb from npm there once: about 15 s and 550 MB)',
    );
  const chdb = createRequire(join(dir, 'package.json'))('chdb') as ChdbModule;
  const path = tempOut('perks-chdb-');
  const session = new chdb.Session(path);
  const run = async (sql: string, format = 'TabSeparated') => (await session.queryAsync(sql, { format })).text();
  for (const [setting, value] of Object.entries(JSON_LIKE_PERKS)) await run(`SET ${setting} = ${value}`);
  return {
    run,
    async rows<T>(sql: string) {
      const text = await run(sql, 'JSONEachRow');
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T);
    },
    close() {
      session.close();
      rmSync(path, { recursive: true, force: true });
    },
  };
}
