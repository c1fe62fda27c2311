/**
 * Test fixtures for the write-back: a sandbox over HTTP, a config for it, and mart files written
 * straight to `<out>/marts/` (what `perks build` publishes), built from the sandbox's own users.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';
import { onTestFinished } from 'vitest';
import { clientFromConfig, type PerksClient } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { now } from '../../src/shared/clock.js';
import { runWriteback, type WritebackOptions, type WritebackRow } from '../../src/writeback/index.js';
import { SANDBOX_DEFAULTS, sandboxEnv } from '../support/sandbox.js';
import { sandboxForEachTest } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

export const SEGMENTS = ['new', 'active', 'dormant', 'churned', 'never_active'] as const;

export interface EngagementUser {
  organisation_group_id: number;
  user_id: number;
  segment: string;
  is_anonymised?: boolean;
}

export interface SavingsMonth {
  organisation_group_id: number;
  user_id: number;
  month: string;
  order_currency?: string | null;
  order_saving: number;
  egift_savings: number;
}

/** The write-back tests' sandbox (with the sandbox's own limit on token requests). */
export const WRITEBACK_SANDBOX = {
  seed: 3,
  rateLimit: 100_000,
  tokenRateLimit: SANDBOX_DEFAULTS.tokenRateLimit,
  today: '2026-11-22',
} as const;

/**
 * A sandbox of its own for each test of the file (the same facts get the same ids, so tests must not
 * share a platform); call the returned function inside a test.
 */
export const sandboxPerTest = (): (() => Sandbox) => sandboxForEachTest(WRITEBACK_SANDBOX);

/** An output directory with marts from the sandbox's users, a client, and a runner of the write-back. */
export async function prepare(sandbox: Sandbox, marts = martsFromSandbox(sandbox)) {
  const outDir = tempOut('perks-writeback-');
  await writeMarts(outDir, marts);
  const config = configFor(sandbox, outDir);
  const client = clientFor(config);
  onTestFinished(() => client.close());
  const run = (extra: Partial<WritebackOptions> = {}) =>
    runWriteback({ output: outputAt(outDir), client, config, pendingGraceMs: 0, minRetryDelayMs: 5, ...extra });
  return { outDir, config, client, marts, run };
}

export function configFor(sandbox: Sandbox, outDir: string): Config {
  return loadConfig(sandboxEnv(sandbox, outDir));
}

export function clientFor(config: Config): PerksClient {
  return clientFromConfig(config, { minRetryDelayMs: 5 });
}

/** Every sandbox user with a segment (cycling through the five), and savings for every third user. */
export function martsFromSandbox(sandbox: Sandbox): { users: EngagementUser[]; savings: SavingsMonth[] } {
  const all = [...sandbox.world.users.all()].sort((a, b) => a.id - b.id);
  const users = all.map((u, i) => ({
    organisation_group_id: u.groupId,
    user_id: u.id,
    segment: SEGMENTS[i % SEGMENTS.length],
  }));
  const savings = all
    .filter((_, i) => i % 3 === 0)
    .flatMap((u) => [
      {
        organisation_group_id: u.groupId,
        user_id: u.id,
        month: '2026-09-01',
        order_currency: 'XTS',
        order_saving: 40,
        egift_savings: 15.5,
      },
      {
        organisation_group_id: u.groupId,
        user_id: u.id,
        month: '2026-10-01',
        order_currency: 'XTS',
        order_saving: 30,
        egift_savings: 0,
      },
    ]);
  return { users, savings };
}

/** Writes engagement_users and savings_monthly as `perks build` would publish them. */
export async function writeMarts(
  outDir: string,
  marts: { users: EngagementUser[]; savings: SavingsMonth[] },
): Promise<void> {
  const dir = path.join(outDir, 'marts');
  fs.mkdirSync(dir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const write = async (name: string, rows: object[], columns: string, select: string) => {
      const json = path.join(dir, `${name}.json`);
      fs.writeFileSync(json, rows.map((r) => JSON.stringify(r)).join('\n'));
      const source = `read_json(${quotedString(json)}, format = 'newline_delimited', columns = ${columns})`;
      await conn.run(
        `COPY (SELECT ${select} FROM ${source}) TO ${quotedString(path.join(dir, `${name}.parquet`))} (FORMAT parquet)`,
      );
      fs.rmSync(json);
    };
    await write(
      'engagement_users',
      marts.users,
      `{organisation_group_id: 'BIGINT', user_id: 'BIGINT', segment: 'VARCHAR', is_anonymised: 'BOOLEAN'}`,
      `organisation_group_id, user_id, 'UID-' || user_id AS user_uid, 'Active' AS status, coalesce(is_anonymised, false) AS is_anonymised, segment`,
    );
    await write(
      'savings_monthly',
      marts.savings,
      `{organisation_group_id: 'BIGINT', user_id: 'BIGINT', month: 'DATE', order_currency: 'VARCHAR', order_saving: 'DECIMAL(18,2)', egift_savings: 'DECIMAL(18,2)'}`,
      // the milestones count recognised savings (issue 43): these fixtures' orders are all Complete
      '*, order_saving AS recognised_order_saving',
    );
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** How many times the sandbox holds each interaction_id (its generated history has ids of another range). */
export function storedTimes(sandbox: Sandbox): Map<string, number> {
  const times = new Map<string, number>();
  for (const user of sandbox.world.users.all()) {
    for (const i of sandbox.world.interactionsOf(user)) {
      times.set(i.interaction_id, (times.get(i.interaction_id) ?? 0) + 1);
    }
  }
  return times;
}

export function storedTotal(sandbox: Sandbox): number {
  return Object.values(sandbox.stats().interactionsStored).reduce((a, b) => a + b, 0);
}

/** A journal line as a run writes it before posting (the write-ahead 'pending' entry). */
// Ledger attempt times are the program's clock, as the ledger's clock stamps them (src/writeback/ledger-clock.ts).
export function pendingLine(row: WritebackRow, at = now()): string {
  return JSON.stringify({
    ...row,
    status: 'pending',
    http_status: null,
    message: null,
    attempted_at: at.toISOString(),
    _run_id: 'wb-00000000T000000000Z-crash',
  });
}

/** Leaves `rows` pending in the output, as a run killed after announcing them would (plus `tail`, e.g. a torn line). */
export function writePendingJournal(outDir: string, rows: WritebackRow[], tail = '', at = now()): void {
  const state = path.join(outDir, 'state', 'writeback');
  fs.mkdirSync(state, { recursive: true });
  fs.writeFileSync(
    path.join(state, 'journal-wb-00000000T000000000Z-crash.jsonl'),
    `${rows.map((r) => `${pendingLine(r, at)}\n`).join('')}${tail}`,
  );
}
