/**
 * `runWriteback`: posts what the write-back models say and the ledger has not recorded, each row
 * exactly once across crashes and reruns. Order of work (writeBack below):
 *  1. lock the output's write-back, compact journals left by earlier (crashed) runs into the ledger;
 *  2. settle the pending rows the operator names as rejected; resolve the other pending rows by looking
 *     them up upstream (found → sent; absent → post again; listing refused → left pending, unresolved);
 *  3. evaluate sql/writeback/*.sql against the marts and the ledger; drop rows already recorded
 *     (rejected ones too, unless --retry-rejected); rows the ledger never saw may be stored upstream already;
 *  4. post in small batches: 'pending' entries fsync'd first, then the posts, then their outcomes;
 *  5. compact this run's journal into the Parquet ledger.
 * A dry run does 3 only and writes nothing.
 */
import { clientFromConfig, type PerksClient } from '../api/index.js';
import { DEFAULTS } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { newRunId } from '../shared/run-id.js';
import { openDb, type Db } from './db.js';
import { HeldKinds } from './held-kinds.js';
import { Journal } from './journal.js';
import { learnStored } from './learn-stored.js';
import { compactJournals, createLedgerView, ledgerDirs, readLedgerState, type LedgerState } from './ledger.js';
import { acquireWritebackLock } from './lock.js';
import { createMartViews, evaluateModels, loadModels, DEFAULT_SQL_DIR } from './models.js';
import { resolvePending, unresolvedOf, waitForGrace } from './recover.js';
import { emptyResult, type WritebackOptions, type WritebackResult } from './result.js';
import { entryOf, rowOf, SETTLED_MESSAGE, type WritebackRow } from './rows.js';
import { sendAll } from './send.js';
import { LedgerClock } from './ledger-clock.js';
import { sortByLedger } from './sort-by-ledger.js';
import type { TypeMap } from './settings.js';

/** One write-back under way: what it works with, and its result as it fills in. */
interface WritebackRun {
  readonly options: WritebackOptions;
  readonly outDir: string;
  readonly dryRun: boolean;
  readonly runId: string;
  readonly types: TypeMap;
  /** The run's client (none for a dry run); ownClient when it made its own, closed at the end. */
  readonly client?: PerksClient;
  readonly ownClient?: PerksClient;
  readonly callsBefore: number;
  readonly lock?: { release(): void };
  readonly db: Db;
  /** This run's journal of outcomes, opened once the run may post. */
  journal?: Journal;
  /** The clock of this run's ledger entries, started after the ledger's latest (recoverLedger). */
  readonly clock: LedgerClock;
  readonly result: WritebackResult;
}

export async function runWriteback(options: WritebackOptions): Promise<WritebackResult> {
  const started = Date.now();
  const run = await startRun(options);
  let failure: { error: unknown } | undefined;
  try {
    await writeBack(run);
  } catch (err) {
    failure = { error: err };
  }
  await finishRun(run, failure !== undefined, started);
  if (failure) throw failure.error;
  return run.result;
}

/** The work, in its order; a dry run stops before anything is posted. */
async function writeBack(run: WritebackRun): Promise<void> {
  const before = await recoverLedger(run);
  const settle = checkSettle(run.options.settlePending ?? [], before.status);
  const repost = await resolvePendingRows(run, before, settle);
  const rows = await modelRows(run);
  const { fresh, retry } = sortByLedger(rows, await readLedgerState(run.db), run.options.retryRejected, run.result);
  const toPost = await unlessStoredUpstream(run, fresh, before);
  const batch = queue(run, [...repost, ...retry, ...toPost]);
  if (run.dryRun || !run.journal || !run.client) return;
  await post(run, run.client, run.journal, batch, repost);
}

/** The client, the lock (unless a dry run) and the database the run works with. */
async function startRun(options: WritebackOptions): Promise<WritebackRun> {
  const outDir = options.output.dir;
  const dryRun = options.dryRun ?? false;
  const runId = options.runId ?? newRunId('wb-');
  const dirs = ledgerDirs(outDir);
  const types = options.types ?? options.config.writebackTypes;
  const ownClient = !options.client && !dryRun ? clientFromConfig(options.config, { runId }) : undefined;
  const client = options.client ?? ownClient;
  const callsBefore = client?.counters.calls ?? 0;
  const result = emptyResult(runId, dryRun, dirs.lake);
  const lock = dryRun ? undefined : acquireWritebackLock(dirs.state);
  const db = await openDb().catch((err: unknown) => {
    lock?.release();
    throw err;
  });
  const clock = new LedgerClock(runId, outDir);
  return { options, outDir, dryRun, runId, types, client, ownClient, callsBefore, lock, db, result, clock };
}

/** 1. Journals of earlier runs into the ledger (not in a dry run), and the ledger as it stands. */
async function recoverLedger(run: WritebackRun): Promise<LedgerState> {
  if (!run.dryRun) await compactJournals(run.db, run.outDir);
  await createLedgerView(run.db, run.outDir);
  const state = await readLedgerState(run.db);
  await run.clock.startAfter(state.latest);
  return state;
}

/**
 * 2. The pending rows: those the operator settles are recorded rejected, the others looked up upstream once
 * they are old enough; returns those to post again. A dry run only counts them.
 */
async function resolvePendingRows(
  run: WritebackRun,
  before: LedgerState,
  settle: Set<number>,
): Promise<WritebackRow[]> {
  const { result, runId, client, clock } = run;
  if (run.dryRun || !client) {
    result.pending = before.pending.length;
    return [];
  }
  const journal = (run.journal = Journal.open(ledgerDirs(run.outDir).state, runId));
  const toSettle = before.pending.filter((e) => settle.has(e.interaction_id));
  journal.append(toSettle.map((e) => entryOf(rowOf(e), 'rejected', clock, { message: SETTLED_MESSAGE })));
  result.settled_pending = toSettle.length;
  const pending = before.pending.filter((e) => !settle.has(e.interaction_id));
  let repost: WritebackRow[] = [];
  if (pending.length) {
    await waitForGrace(pending, run.options.pendingGraceMs ?? DEFAULTS.writeback.pendingGraceMs);
    const recovery = await resolvePending(pending, client, journal, clock);
    result.recovered_pending = recovery.recovered;
    result.unresolved_pending.push(...recovery.unresolved);
    repost = recovery.repost;
  }
  await createLedgerView(run.db, run.outDir); // now with this run's journal
  return repost;
}

/** 3. What the write-back models produce from the marts, each row with its kind's interaction type. */
async function modelRows(run: WritebackRun): Promise<WritebackRow[]> {
  const { db, options, types } = run;
  const outputs = await evaluateModels(
    db,
    loadModels(options.sqlDir ?? DEFAULT_SQL_DIR),
    await createMartViews(db, run.outDir),
  );
  return outputs.flatMap((o) => o.rows).map((r) => ({ ...r, interaction_type: types[r.kind] ?? r.interaction_type }));
}

/** Rows the ledger never saw may be upstream already (a lost or older ledger): learned, not posted twice. */
async function unlessStoredUpstream(
  run: WritebackRun,
  fresh: WritebackRow[],
  before: LedgerState,
): Promise<WritebackRow[]> {
  const { journal, client } = run;
  if (!journal || !client) return fresh;
  const learning = await learnStored(fresh, {
    db: run.db,
    outDir: run.outDir,
    client,
    journal,
    clock: run.clock,
    ledgerEmpty: before.status.size === 0,
  });
  run.result.learned = learning.learned;
  return learning.toPost;
}

/** 4. What this run posts: all of it, or the first --limit (the rest wait for the next run); a dry run shows some. */
function queue(run: WritebackRun, rows: WritebackRow[]): WritebackRow[] {
  const { result, options } = run;
  result.to_send = rows.length;
  const capped = options.limit === undefined ? rows : rows.slice(0, options.limit);
  result.deferred = rows.length - capped.length;
  result.preview = capped.slice(0, options.previewRows ?? DEFAULTS.writeback.previewRows);
  return capped;
}

/** 4. The posts, in batches (send.ts), each outcome counted; a kind rejected systematically is held. */
async function post(
  run: WritebackRun,
  client: PerksClient,
  journal: Journal,
  rows: WritebackRow[],
  repost: WritebackRow[],
): Promise<void> {
  const { result, options } = run;
  const reposting = new Set(repost.map((r) => r.interaction_id));
  const held = new HeldKinds();
  await sendAll(
    rows,
    journal,
    run.clock,
    options.concurrency ?? DEFAULTS.writeback.concurrency,
    { list: client, minRetryDelayMs: options.minRetryDelayMs, post: options.postClient ?? client },
    (row, entry) => {
      if (typeof entry === 'string') {
        result.unresolved_pending.push(unresolvedOf(row, entry));
      } else if (entry.status === 'rejected') {
        result.rejected += 1;
        result.rejections.push({
          interaction_id: row.interaction_id,
          kind: row.kind,
          identifier_value: row.identifier_value,
          http_status: entry.http_status,
          message: entry.message ?? '',
        });
      } else {
        result.sent += 1;
        if (reposting.has(row.interaction_id)) result.reposted_pending += 1;
      }
    },
    held,
    options.output.hooks.journalWritten,
  );
  result.held = held.list();
  result.status = result.rejected || result.unresolved_pending.length || result.held.length ? 'partial' : 'success';
}

/**
 * 5. This run's journal into the ledger (not in a dry run), then the lock, the database and the run's own client
 * let go, and the run's calls and time. A compaction that fails after a run that failed is left to the next run
 * (the journal stays): the run's own error is the one reported.
 */
async function finishRun(run: WritebackRun, failed: boolean, started: number): Promise<void> {
  run.journal?.close();
  let compaction: { error: unknown } | undefined;
  try {
    if (!run.dryRun) await compactJournals(run.db, run.outDir);
    // the run's latest stamp for the directory's next writers: an extract after it stamps after its posts
    if (!run.dryRun) await run.clock.record();
  } catch (err) {
    compaction = { error: err };
  }
  run.lock?.release();
  run.db.close();
  await run.ownClient?.close();
  run.result.calls = (run.client?.counters.calls ?? 0) - run.callsBefore;
  run.result.ms = Date.now() - started;
  if (compaction && !failed) throw compaction.error;
}

/** The ids --settle-pending-as-rejected names, each checked to be pending (else one line, exit 2, nothing settled). */
function checkSettle(ids: number[], status: Map<number, string>): Set<number> {
  for (const id of ids) {
    const state = status.get(id);
    if (state !== 'pending') {
      throw new ConfigError(
        `--settle-pending-as-rejected: interaction ${id} is not pending` +
          ` (${state === undefined ? 'the ledger does not know it' : `it is ${state}`}); nothing was settled`,
      );
    }
  }
  return new Set(ids);
}
