/**
 * `perks users import`: creates a file's users in bulk calls of at most 100 (202, processed
 * asynchronously), under the client's rate limit, and confirms each by reading it back (the bulk answer
 * carries nothing). Before creating, the rows' e-mails are looked up, so a rerun of the same file creates
 * nothing and reports every user as already existing. Looking up and confirming list the group when its
 * pages are fewer than the rows, else read each user (directory.ts). A bulk call the platform refuses (4xx) is sent
 * again user by user, so each row gets its own answer. Every accepted call is audited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PerksClient } from '../api/index.js';
import type { Output } from '../output/index.js';
import type { CreateUserBody } from '../resources/user.js';
import { auditCall, auditScope, type AuditScope } from './audit.js';
import { DEFAULTS } from '../config/index.js';
import { usersByEmail } from './directory.js';
import { isRefusal } from './errors.js';
import { snapshotBasis } from './local-state.js';
import { readImportFile, type ImportRow, type RowRejection } from './rows.js';

export const BULK_SIZE = 100;

export interface ImportOptions {
  client: PerksClient;
  clientId: number;
  /** Where the command writes (the command's Output): the audit log, and the lake a forget rewrites. */
  output: Output;
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
    result.calls = callsAtMost(parsed.rows.length);
    return result;
  }
  const progress = o.onProgress ?? (() => undefined);
  const audit = auditScope(o, 'import', await snapshotBasis(o.output.dir, o.group));
  const run: ImportRun = { o, result, progress, audit };
  const toCreate = await withoutExisting(run, parsed.rows);
  const sent = await createInBulk(run, toCreate);
  await confirmCreated(run, sent);
  for (const list of [result.created, result.existing]) list.sort((a, b) => a.line - b.line);
  result.rejected.sort((a, b) => a.line - b.line);
  return result;
}

/** One import under way: its options, the result it fills in, and the audit of its calls. */
interface ImportRun {
  readonly o: ImportOptions;
  readonly result: ImportResult;
  readonly progress: NonNullable<ImportOptions['onProgress']>;
  readonly audit: AuditScope;
}

/** A dry run's calls: a listing's first page, then one look-up per row (when the listing would cost more). */
function callsAtMost(rows: number): ImportResult['calls'] {
  return { lookups: rows + 1, bulk: Math.ceil(rows / BULK_SIZE), single: 0, confirms: rows + 1 };
}

/** Finds the rows' users on the platform now: a function from a row to its user's id, if there is one. */
async function lookUp(
  run: ImportRun,
  rows: readonly ImportRow[],
  phase: 'look up' | 'confirm',
): Promise<(row: ImportRow) => number | undefined> {
  const { o, result, progress } = run;
  const emails = rows.map((r) => r.body.email);
  const found = await usersByEmail(o.client, o.group, emails, (d, t) => progress(phase, d, t));
  result.calls[phase === 'look up' ? 'lookups' : 'confirms'] += found.calls;
  return (row) => found.found.get(row.body.email.toLowerCase());
}

/** 1. Who exists already (any state: the platform rejects creating them) is listed as existing; the rest returned. */
async function withoutExisting(run: ImportRun, rows: readonly ImportRow[]): Promise<ImportRow[]> {
  const idOf = await lookUp(run, rows, 'look up');
  const toCreate: ImportRow[] = [];
  for (const row of rows) {
    const id = idOf(row);
    if (id === undefined) toCreate.push(row);
    else run.result.existing.push({ line: row.line, id });
  }
  return toCreate;
}

/** 2. Bulk calls of at most BULK_SIZE; a refused batch goes user by user. Returns the rows the bulk calls carried. */
async function createInBulk(run: ImportRun, rows: readonly ImportRow[]): Promise<ImportRow[]> {
  const sent: ImportRow[] = [];
  for (let i = 0; i < rows.length; i += BULK_SIZE) {
    const batch = rows.slice(i, i + BULK_SIZE);
    if (await sendBulk(run, batch)) sent.push(...batch);
    else for (const row of batch) await createOne(run, row);
    run.progress('create', Math.min(i + BULK_SIZE, rows.length), rows.length);
  }
  return sent;
}

/** One bulk call, audited; false when the platform refused it. */
async function sendBulk(run: ImportRun, batch: readonly ImportRow[]): Promise<boolean> {
  const { o, result, audit } = run;
  const call = { operation: 'bulkCreateUsers', users: batch.length };
  try {
    result.calls.bulk++;
    await o.client.call('bulkCreateUsers', {
      group: o.group,
      body: { data: batch.map((r) => r.body), ...activationEmail(o) },
    });
    await auditCall(audit, { ...call, outcome: 'ok', answer: { message: 'accepted (202): created asynchronously' } });
    return true;
  } catch (err) {
    if (!isRefusal(err)) throw err;
    await auditCall(audit, { ...call, outcome: 'rejected', answer: { status: err.status, message: err.message } });
    return false;
  }
}

/** 3. Reads each sent user back; the bulk is asynchronous, so the missing are asked again a little later. */
async function confirmCreated(run: ImportRun, sent: readonly ImportRow[]): Promise<void> {
  const deadline = Date.now() + (run.o.confirmWaitMs ?? DEFAULTS.usersConfirmWaitSeconds * 1000);
  let waiting = sent;
  for (let round = 0; waiting.length; round++) {
    const missing = await confirmRound(run, waiting);
    if (!missing.length) break;
    if (Date.now() >= deadline) {
      for (const row of missing) run.result.rejected.push({ line: row.line, reason: NOT_CREATED });
      break;
    }
    await sleep(Math.min(1000 * 2 ** round, Math.max(0, deadline - Date.now())));
    waiting = missing;
  }
}

const NOT_CREATED =
  'the platform accepted it in a bulk call but has not created it (no user with this e-mail): its UID may be taken, ' +
  'or processing is slow; rerun the import later';

/** One reading back: the users found are created (and audited); the rows still missing are returned. */
async function confirmRound(run: ImportRun, waiting: readonly ImportRow[]): Promise<ImportRow[]> {
  const idOf = await lookUp(run, waiting, 'confirm');
  const missing: ImportRow[] = [];
  for (const row of waiting) {
    const id = idOf(row);
    if (id === undefined) {
      missing.push(row);
      continue;
    }
    run.result.created.push({ line: row.line, id });
    await auditCall(run.audit, {
      operation: 'bulkCreateUsers',
      user_id: id,
      outcome: 'ok',
      answer: { message: 'created (confirmed by reading it back)' },
      state_after: 'active',
    });
  }
  return missing;
}

/** A refused bulk's row, created alone so that it gets the platform's own answer. */
async function createOne(run: ImportRun, row: ImportRow): Promise<void> {
  const { o, result, audit } = run;
  result.calls.single++;
  const body: CreateUserBody = { ...row.body, ...activationEmail(o) };
  try {
    // Sent once: a create repeated after a lost answer would be refused as a duplicate of itself.
    const user = await o.client.call('createUser', { group: o.group, body }, { retries: 0 });
    result.created.push({ line: row.line, id: user.id });
    await auditCall(audit, {
      operation: 'createUser',
      user_id: user.id,
      outcome: 'ok',
      answer: { user_status: user.status ?? null },
      state_after: 'active',
    });
  } catch (err) {
    if (!isRefusal(err)) throw err;
    result.rejected.push({ line: row.line, reason: `the platform refused it: ${err.message}` });
    await auditCall(audit, {
      operation: 'createUser',
      outcome: 'rejected',
      answer: { status: err.status, message: err.message },
    });
  }
}

/** --send-activation-email as the body says it: only when given. */
function activationEmail(o: ImportOptions): { send_activation_email?: boolean } {
  return o.sendActivationEmail === undefined ? {} : { send_activation_email: o.sendActivationEmail };
}
