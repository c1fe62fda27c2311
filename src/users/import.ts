/**
 * `perks users import`: creates a file's users in bulk calls of at most 100 (202, processed
 * asynchronously), under the client's rate limit, and confirms each by reading it back (the bulk answer
 * carries nothing). Before creating, the rows' e-mails are looked up, so a rerun of the same file creates
 * nothing and reports every user as already existing. Looking up and confirming list the group when its
 * pages are fewer than the rows, else read each user (directory.ts). A bulk call the platform refuses (4xx) is sent
 * again user by user, so each row gets its own answer. Every accepted call is audited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, type PerksClient } from '../api/index.js';
import type { CreateUserBody } from '../resources/user.js';
import { appendAudit, operator } from './audit.js';
import { DEFAULTS } from '../config/index.js';
import { usersByEmail } from './directory.js';
import { snapshotBasis } from './local-state.js';
import { readImportFile, type ImportRow, type RowRejection } from './rows.js';

export const BULK_SIZE = 100;

export interface ImportOptions {
  client: PerksClient;
  clientId: number;
  outDir: string;
  group?: number;
  sendActivationEmail?: boolean;
  /** How long to wait, at most, for the platform to process a bulk call before a user counts as not created. */
  confirmWaitMs?: number;
  dryRun?: boolean;
  onProgress?: (phase: ImportPhase, done: number, total: number) => void;
}

export type ImportPhase = 'look up' | 'create' | 'confirm';

export interface ImportedUser {
  line: number;
  id: number;
}

export interface ImportResult {
  file: string;
  rows: number;
  dryRun: boolean;
  created: ImportedUser[];
  existing: ImportedUser[];
  rejected: RowRejection[];
  /** Calls made, by purpose (dry run: the calls it would make at most). */
  calls: { lookups: number; bulk: number; single: number; confirms: number };
}

export async function importUsers(file: string, o: ImportOptions): Promise<ImportResult> {
  const parsed = await readImportFile(file);
  const result: ImportResult = {
    file,
    rows: parsed.rows.length + parsed.rejected.length,
    dryRun: !!o.dryRun,
    created: [],
    existing: [],
    rejected: [...parsed.rejected],
    calls: { lookups: 0, bulk: 0, single: 0, confirms: 0 },
  };
  if (o.dryRun) {
    const n = parsed.rows.length;
    // at most: a listing's first page, then one look-up per row (when the listing would cost more)
    result.calls = { lookups: n + 1, bulk: Math.ceil(n / BULK_SIZE), single: 0, confirms: n + 1 };
    return result;
  }
  const progress = o.onProgress ?? (() => undefined);
  const basis = await snapshotBasis(o.outDir, o.group);
  const audit = (entry: Parameters<typeof appendAudit>[1]) => appendAudit(o.outDir, { ...entry, basis });
  const actor = { client_id: o.clientId, operator: operator() };

  // 1. Who exists already (any state: the platform rejects creating them).
  const before = await usersByEmail(
    o.client,
    o.group,
    parsed.rows.map((r) => r.body.email),
    (d, t) => progress('look up', d, t),
  );
  result.calls.lookups += before.calls;
  const toCreate: ImportRow[] = [];
  for (const row of parsed.rows) {
    const id = before.found.get(row.body.email.toLowerCase());
    if (id === undefined) toCreate.push(row);
    else result.existing.push({ line: row.line, id });
  }

  // 2. Bulk calls of at most 100; a refused batch goes user by user.
  const sent: ImportRow[] = [];
  for (let i = 0; i < toCreate.length; i += BULK_SIZE) {
    const batch = toCreate.slice(i, i + BULK_SIZE);
    const lines = { users: batch.length };
    try {
      result.calls.bulk++;
      await o.client.call('bulkCreateUsers', {
        group: o.group,
        body: {
          data: batch.map((r) => r.body),
          ...(o.sendActivationEmail === undefined ? {} : { send_activation_email: o.sendActivationEmail }),
        },
      });
      await audit({
        actor,
        command: 'import',
        operation: 'bulkCreateUsers',
        group: o.group,
        ...lines,
        outcome: 'ok',
        answer: { message: 'accepted (202): created asynchronously' },
      });
      sent.push(...batch);
    } catch (err) {
      if (!(err instanceof ApiError) || err.transient || err.kind === 'authentication') throw err;
      await audit({
        actor,
        command: 'import',
        operation: 'bulkCreateUsers',
        group: o.group,
        ...lines,
        outcome: 'rejected',
        answer: { status: err.status, message: err.message },
      });
      for (const row of batch) await createOne(o, row, result, actor, basis);
    }
    progress('create', Math.min(i + BULK_SIZE, toCreate.length), toCreate.length);
  }

  // 3. Read each sent user back; the bulk is asynchronous, so the missing are asked again a little later.
  let waiting = sent;
  const deadline = Date.now() + (o.confirmWaitMs ?? DEFAULTS.usersConfirmWaitSeconds * 1000);
  for (let round = 0; waiting.length; round++) {
    const after = await usersByEmail(
      o.client,
      o.group,
      waiting.map((r) => r.body.email),
      (d, t) => progress('confirm', d, t),
    );
    result.calls.confirms += after.calls;
    const missing: ImportRow[] = [];
    for (const row of waiting) {
      const id = after.found.get(row.body.email.toLowerCase());
      if (id === undefined) {
        missing.push(row);
        continue;
      }
      result.created.push({ line: row.line, id });
      await audit({
        actor,
        command: 'import',
        operation: 'bulkCreateUsers',
        group: o.group,
        user_id: id,
        outcome: 'ok',
        answer: { message: 'created (confirmed by reading it back)' },
        state_after: 'active',
      });
    }
    if (!missing.length) break;
    if (Date.now() >= deadline) {
      for (const row of missing)
        result.rejected.push({
          line: row.line,
          reason:
            'the platform accepted it in a bulk call but has not created it (no user with this e-mail): its UID may be taken, or processing is slow; rerun the import later',
        });
      break;
    }
    await sleep(Math.min(1000 * 2 ** round, Math.max(0, deadline - Date.now())));
    waiting = missing;
  }

  for (const list of [result.created, result.existing]) list.sort((a, b) => a.line - b.line);
  result.rejected.sort((a, b) => a.line - b.line);
  return result;
}

async function createOne(
  o: ImportOptions,
  row: ImportRow,
  result: ImportResult,
  actor: { client_id: number; operator: string },
  basis: string | null,
): Promise<void> {
  result.calls.single++;
  const body: CreateUserBody =
    o.sendActivationEmail === undefined ? row.body : { ...row.body, send_activation_email: o.sendActivationEmail };
  try {
    // Sent once: a create repeated after a lost answer would be refused as a duplicate of itself.
    const user = await o.client.call('createUser', { group: o.group, body }, { retries: 0 });
    result.created.push({ line: row.line, id: user.id });
    await appendAudit(o.outDir, {
      actor,
      command: 'import',
      operation: 'createUser',
      group: o.group,
      user_id: user.id,
      outcome: 'ok',
      answer: { user_status: user.status ?? null },
      state_after: 'active',
      basis,
    });
  } catch (err) {
    if (!(err instanceof ApiError) || err.transient || err.kind === 'authentication') throw err;
    result.rejected.push({ line: row.line, reason: `the platform refused it: ${err.message}` });
    await appendAudit(o.outDir, {
      actor,
      command: 'import',
      operation: 'createUser',
      group: o.group,
      outcome: 'rejected',
      answer: { status: err.status, message: err.message },
      basis,
    });
  }
}
