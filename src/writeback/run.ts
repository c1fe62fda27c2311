/**
 * `runWriteback`: posts what the write-back models say and the ledger has not recorded, each row
 * exactly once across crashes and reruns. Order of work:
 *  1. lock the output's write-back, compact journals left by earlier (crashed) runs into the ledger;
 *  2. settle the pending rows the operator names as rejected; resolve the other pending rows by looking
 *     them up upstream (found → sent; absent → post again; listing refused → left pending, unresolved);
 *  3. evaluate sql/writeback/*.sql against the marts and the ledger; drop rows already recorded
 *     (rejected ones too, unless --retry-rejected);
 *  4. post in small batches: 'pending' entries fsync'd first, then the posts, then their outcomes;
 *  5. compact this run's journal into the Parquet ledger.
 * A dry run does 3 only and writes nothing.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { clientFromConfig, type PerksClient } from '../api/index.js';
import { DEFAULTS, type Config } from '../config/index.js';
import { openDb } from './db.js';
import { Journal } from './journal.js';
import { compactJournals, createLedgerView, ledgerDirs, readLedgerState, type LedgerState } from './ledger.js';
import { HeldKinds, type HeldKind } from './held-kinds.js';
import { learnStored, type Learned } from './learn-stored.js';
import { acquireWritebackLock } from './lock.js';
import { createMartViews, evaluateModels, loadModels, DEFAULT_SQL_DIR } from './models.js';
import type { PosterOptions } from './poster.js';
import { sendAll } from './send.js';
import { resolvePending, unresolvedOf, waitForGrace, type Unresolved } from './recover.js';
import { entryOf, rowOf, SETTLED_MESSAGE, type WritebackRow } from './rows.js';
import { ConfigError } from '../shared/exit-codes.js';
import { typeMapFromEnv, type TypeMap } from './settings.js';
import { now as clockNow } from '../shared/clock.js';

export interface WritebackOptions {
  outDir: string;
  /**
   * The run's client: its limiter (one per credential) and counters are shared by every call here.
   * Default: one from `config` (a dry run makes no calls and needs none).
   */
  client?: PerksClient;
  config: Config;
  dryRun?: boolean;
  /** At most this many posts in this run (re-posts of pending rows included); the rest wait for the next. */
  limit?: number;
  /** kind → interaction_type; default from PERKS_WRITEBACK_TYPES. */
  types?: TypeMap;
  runId?: string;
  sqlDir?: string;
  /** Posts in flight at once (the limiter spaces them). */
  concurrency?: number;
  /** How old a pending row must be before it is looked up upstream (see recover.ts). */
  pendingGraceMs?: number;
  previewRows?: number;
  /** First backoff of the post's own retries (grows exponentially). */
  minRetryDelayMs?: number;
  /** Client for posts (sent once each, see poster.ts); default: `client`. */
  postClient?: PerksClient;
  /** Post again the rows the ledger records as rejected (a rejection was not stored) that the models still produce. */
  retryRejected?: boolean;
  /** Pending rows (interaction ids) to record as rejected without a lookup: the operator's way out. */
  settlePending?: number[];
}

export interface TypeCount {
  kind: string;
  interaction_type: string;
  rows: number;
  to_send: number;
}

export interface Rejection {
  interaction_id: number;
  kind: string;
  identifier_value: string;
  http_status: number | null;
  message: string;
}

export interface WritebackResult {
  status: 'success' | 'partial';
  run_id: string;
  dry_run: boolean;
  /** Rows the models produced. */
  rows: number;
  by_type: TypeCount[];
  /** Rows this run would post (new rows and pending rows to post again), before --limit. */
  to_send: number;
  sent: number;
  rejected: number;
  skipped_already_sent: number;
  skipped_rejected: number;
  /** Pending rows of an earlier run found upstream (recorded as sent, not posted again). */
  recovered_pending: number;
  /** Pending rows of an earlier run not found upstream, posted again. */
  reposted_pending: number;
  /** Pending rows a dry run would look up. */
  pending: number;
  /** Rows left for the next run by --limit. */
  deferred: number;
  /** Pending rows whose storage could not be learned (listing refused): left pending, looked up again next run. */
  unresolved_pending: Unresolved[];
  /** Pending rows the operator settled as rejected in this run. */
  settled_pending: number;
  /** Rejected rows queued again (before --limit): by --retry-rejected, or because their type changed since. */
  retried_rejected: number;
  /** Kinds the platform rejected systematically: held for the rest of the run (held-kinds.ts). */
  held: HeldKind[];
  /** Rows the ledger did not know found already stored upstream, and what learning it cost (learn-stored.ts). */
  learned?: Learned;
  calls: number;
  ms: number;
  preview: WritebackRow[];
  rejections: Rejection[];
  ledger: string;
}

export function newRunId(now = clockNow()): string {
  return `wb-${now.toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
}

export async function runWriteback(options: WritebackOptions): Promise<WritebackResult> {
  const started = Date.now();
  const outDir = path.resolve(options.outDir);
  const dryRun = options.dryRun ?? false;
  const runId = options.runId ?? newRunId();
  const dirs = ledgerDirs(outDir);
  const types = options.types ?? typeMapFromEnv();
  const ownClient = !options.client && !dryRun ? clientFromConfig(options.config, { runId }) : undefined;
  const client = options.client ?? ownClient;
  const callsBefore = client?.counters.calls ?? 0;
  const result: WritebackResult = {
    status: 'success',
    run_id: runId,
    dry_run: dryRun,
    rows: 0,
    by_type: [],
    to_send: 0,
    sent: 0,
    rejected: 0,
    skipped_already_sent: 0,
    skipped_rejected: 0,
    recovered_pending: 0,
    reposted_pending: 0,
    pending: 0,
    deferred: 0,
    unresolved_pending: [],
    settled_pending: 0,
    retried_rejected: 0,
    held: [],
    calls: 0,
    ms: 0,
    preview: [],
    rejections: [],
    ledger: dirs.lake,
  };
  const lock = dryRun ? undefined : acquireWritebackLock(dirs.state);
  const db = await openDb().catch((err: unknown) => {
    lock?.release();
    throw err;
  });
  let journal: Journal | undefined;
  let failed = false;
  try {
    if (!dryRun) await compactJournals(db, outDir);
    await createLedgerView(db, outDir);
    const before = await readLedgerState(db);
    const settle = checkSettle(options.settlePending ?? [], before.status);
    let repost: WritebackRow[] = [];
    if (dryRun || !client) {
      result.pending = before.pending.length;
    } else {
      journal = Journal.open(dirs.state, runId);
      const toSettle = before.pending.filter((e) => settle.has(e.interaction_id));
      journal.append(toSettle.map((e) => entryOf(rowOf(e), 'rejected', runId, { message: SETTLED_MESSAGE })));
      result.settled_pending = toSettle.length;
      const pending = before.pending.filter((e) => !settle.has(e.interaction_id));
      if (pending.length) {
        await waitForGrace(pending, options.pendingGraceMs ?? DEFAULTS.writeback.pendingGraceMs);
        const recovery = await resolvePending(pending, client, journal, runId);
        result.recovered_pending = recovery.recovered;
        result.unresolved_pending.push(...recovery.unresolved);
        repost = recovery.repost;
      }
      await createLedgerView(db, outDir); // now with this run's journal
    }

    const outputs = await evaluateModels(
      db,
      loadModels(options.sqlDir ?? DEFAULT_SQL_DIR),
      await createMartViews(db, outDir),
    );
    const rows = outputs
      .flatMap((o) => o.rows)
      .map((r) => ({ ...r, interaction_type: types[r.kind] ?? r.interaction_type }));
    const state = await readLedgerState(db);
    const fresh: WritebackRow[] = [];
    const retry: WritebackRow[] = [];
    const counts = new Map<string, TypeCount>();
    for (const row of rows) {
      const key = `${row.kind}\u0000${row.interaction_type}`;
      const count = counts.get(key) ?? { kind: row.kind, interaction_type: row.interaction_type, rows: 0, to_send: 0 };
      counts.set(key, count);
      count.rows += 1;
      const known = state.status.get(row.interaction_id);
      if (known === 'sent') result.skipped_already_sent += 1;
      else if (known === 'rejected' && !retriesRejected(row, state, options.retryRejected))
        result.skipped_rejected += 1;
      else if (known === 'rejected') {
        retry.push(row); // not stored (a 4xx), so posting it again cannot store it twice
        count.to_send += 1;
      } else if (known === undefined) {
        fresh.push(row);
        count.to_send += 1;
      } // 'pending': resolved above (a dry run only counts it)
    }
    result.rows = rows.length;
    result.by_type = [...counts.values()].sort(
      (a, b) => a.kind.localeCompare(b.kind) || a.interaction_type.localeCompare(b.interaction_type),
    );
    result.retried_rejected = retry.length;
    if (journal && client) {
      // Rows the ledger never saw may be upstream already (a lost or older ledger): learned, not posted twice.
      const learning = await learnStored(fresh, {
        db,
        outDir,
        client,
        journal,
        runId,
        ledgerEmpty: before.status.size === 0,
      });
      fresh.splice(0, fresh.length, ...learning.toPost);
      result.learned = learning.learned;
    }
    const queue = [...repost, ...retry, ...fresh];
    result.to_send = queue.length;
    const capped = options.limit === undefined ? queue : queue.slice(0, options.limit);
    result.deferred = queue.length - capped.length;
    result.preview = capped.slice(0, options.previewRows ?? DEFAULTS.writeback.previewRows);
    if (dryRun || !journal || !client) return result;

    const poster: PosterOptions = {
      list: client,
      minRetryDelayMs: options.minRetryDelayMs,
      post: options.postClient ?? client,
    };
    const reposting = new Set(repost.map((r) => r.interaction_id));
    const held = new HeldKinds();
    await sendAll(
      capped,
      journal,
      runId,
      options.concurrency ?? DEFAULTS.writeback.concurrency,
      poster,
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
    );
    result.held = held.list();
    result.status = result.rejected || result.unresolved_pending.length || result.held.length ? 'partial' : 'success';
    return result;
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    journal?.close();
    try {
      if (!dryRun) await compactJournals(db, outDir);
    } catch (err) {
      // The journal stays and the next run compacts it: never hide the run's own error behind this one.
      // eslint-disable-next-line no-unsafe-finally -- the cleanup's own error, only when the run had none
      if (!failed) throw err;
    } finally {
      lock?.release();
      db.close();
      await ownClient?.close();
      result.calls = (client?.counters.calls ?? 0) - callsBefore;
      result.ms = Date.now() - started;
    }
  }
}

/**
 * A rejected row is posted again with --retry-rejected, or by itself when its interaction_type is no
 * longer the one it was rejected as (PERKS_WRITEBACK_TYPES changed): a 4xx stored nothing upstream, so
 * this cannot store it twice. Rows the operator settled as rejected are never posted again.
 */
function retriesRejected(row: WritebackRow, state: LedgerState, retryRejected?: boolean): boolean {
  if (state.settled.has(row.interaction_id)) return false;
  return retryRejected === true || state.rejectedAs.get(row.interaction_id) !== row.interaction_type;
}

/** The ids --settle-pending-as-rejected names, each checked to be pending (else one line, exit 2, nothing settled). */
function checkSettle(ids: number[], status: Map<number, string>): Set<number> {
  for (const id of ids) {
    const state = status.get(id);
    if (state !== 'pending') {
      throw new ConfigError(
        `--settle-pending-as-rejected: interaction ${id} is not pending (${state === undefined ? 'the ledger does not know it' : `it is ${state}`}); nothing was settled`,
      );
    }
  }
  return new Set(ids);
}
