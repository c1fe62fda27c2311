/**
 * Every default of the program, in one place: the settings' (PERKS_*, read by ConfigSchema), the commands'
 * options, the stages' own knobs and the embedded sandbox's. Code and help texts read them from here; the
 * README's tables say the same.
 */
import { DEFAULT_CREDIT_PATH } from '../resources/credit.js';

export const DEFAULTS = {
  /** PERKS_SCOPE: the token's scope. */
  scope: '*',
  /** PERKS_RATE_LIMIT: calls per minute per credential (the API's documented limit). */
  rateLimit: 120,
  /** PERKS_OUTPUT */
  output: './output',
  /** PERKS_CREDIT_PATH: the spec does not show it (src/resources/credit.ts). */
  creditPath: DEFAULT_CREDIT_PATH,
  /** PERKS_LOOKBACK_DAYS: days every run re-reads for late changes. */
  lookbackDays: 7,
  /** PERKS_DEEP_REREAD_DAYS: every N days the open and the previous month are re-read whole (0: never). */
  deepRereadDays: 7,
  /** PERKS_API_TIMEZONE: the zone the API reads order_created_from/to in. */
  apiTimezone: 'UTC',
  /** PERKS_REFRESH_DAYS: every user's per-user streams are refreshed at least this often, budget allowing. */
  refreshDays: 7,
  /** PERKS_QUARANTINE_THRESHOLD: a share of quarantined records above this ends the run partial (exit 4). */
  quarantineThreshold: 0.001,
  /** PERKS_REVENUE_STATUSES: the order statuses that are recognised revenue. */
  revenueStatuses: ['Complete'],
  /**
   * `perks status`: PERKS_WARN_AFTER / PERKS_ERROR_AFTER. One daily run may be late by two hours before anyone is
   * told; two missed runs are an alert.
   */
  status: { warnAfter: '26h', errorAfter: '50h' },
  /** `perks extract` / `perks run`. */
  extract: {
    /** --budget-minutes: calls of the per-user streams, in minutes at the rate limit. */
    budgetMinutes: 30,
    /** Windows or users in flight at once per stream (the limiter spaces them). */
    concurrency: 4,
    /** --shard-wait-minutes: how long shards 2..N wait for shard 1's hand-off. */
    shardWaitMinutes: 120,
  },
  /**
   * The settled-change guard (src/extract/windows/settled-guard.ts): a re-read of a final month (and of the month
   * `perks close` re-reads) is held, not applied, when in one currency it would remove or change more than
   * `orders` orders (a refund or a cancellation aside: a status out of recognised revenue is how a final month
   * legitimately changes) AND move more than `revenueShare` of the month's recognised revenue (the larger
   * allowance wins), or when it would leave the month without any order. `--accept-changes` applies it.
   */
  settledGuard: { orders: 20, revenueShare: 0.02 },
  /** `perks build`. */
  build: {
    /** --new-days, --active-days, --dormant-days: the engagement segments' windows. */
    segments: { newDays: 30, activeDays: 30, dormantDays: 90 },
    /**
     * PERKS_BUILD_MEMORY_LIMIT / --memory-limit: DuckDB's memory limit for a build; beyond it DuckDB spills to
     * `<out>/warehouse.duckdb.tmp-…spill` (removed after the build).
     */
    memoryLimit: '1GB',
    /**
     * PERKS_MART_LAYOUT / --mart-layout: how a mart built by months (`incremental:`) is exported: `file`
     * (`marts/<mart>.parquet`, rewritten whole), `months` (`marts/<mart>/<YYYY-MM>.parquet`, only the months
     * the build replaced rewritten) or `both`.
     */
    martLayout: 'both' as 'file' | 'months' | 'both',
  },
  /** `perks writeback`. */
  writeback: {
    /** Posts in flight at once (the limiter spaces them). */
    concurrency: 4,
    /** How old a pending row must be before it is looked up upstream (writeback/recover.ts). */
    pendingGraceMs: 5_000,
    /** Rows a dry run shows. */
    previewRows: 10,
    /** A post's own retries of transient failures, and the first backoff (it grows exponentially). */
    postRetries: 6,
    postRetryDelayMs: 500,
  },
  /** An output in object storage (src/store). */
  store: {
    /**
     * PERKS_STORE_LEASE_SECONDS: a writer's lease lasts this long after its last heartbeat (renewed every sixth of
     * it); a holder that stops renewing is taken over after it, sooner only when its death is certain.
     */
    leaseSeconds: 120,
    /**
     * PERKS_STORE_CHECKPOINT_SECONDS / PERKS_STORE_CHECKPOINT_MB: while an extract runs, what it committed is
     * published when this much time has passed or this many MB were landed since the last publish (0: only at the end).
     */
    checkpointSeconds: 60,
    checkpointMb: 256,
  },
  /** OpenLineage (src/config/lineage-settings.ts; docs/reference/lineage.md). */
  lineage: {
    /** OPENLINEAGE_ENDPOINT: where below OPENLINEAGE_URL the events are posted (OpenLineage's clients' default). */
    endpoint: 'api/v1/lineage',
    /** OPENLINEAGE_NAMESPACE: the jobs' namespace. */
    namespace: 'perks',
    /** OPENLINEAGE__TRANSPORT__TIMEOUT: seconds one post may take (OpenLineage's clients' default). */
    timeoutSeconds: 5,
  },
  /** `perks users import --confirm-wait`: seconds to wait, at most, for the platform to process the bulk calls. */
  usersConfirmWaitSeconds: 30,
  /** `perks sandbox` / startSandbox: where it listens, what it generates, and the API's limit it enforces. */
  sandbox: { host: '127.0.0.1', port: 0, seed: 1, scale: 'tiny', rateLimit: 120 },
} as const;
