/** What a write-back is asked (WritebackOptions) and what it returns, as data (WritebackResult). */
import type { PerksClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { HeldKind } from './held-kinds.js';
import type { Learned } from './learn-stored.js';
import type { Unresolved } from './recover.js';
import type { WritebackRow } from './rows.js';
import type { TypeMap } from './settings.js';
import type { Output } from '../output/index.js';

export interface WritebackOptions {
  /** Where it writes (the command's Output): its folder, and its journal reported to a store. */
  output: Output;
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

/** A run's result before it has done anything: every count 0, every list empty. */
export function emptyResult(runId: string, dryRun: boolean, ledger: string): WritebackResult {
  return {
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
    ledger,
  };
}
