/** What the sandbox has served, for tests: calls per client and path, token requests, 429s, call times. */
import type { FaultCounts } from './faults.js';

export interface SandboxStats {
  /** Every request received. */
  calls: number;
  /** Authenticated API calls (token requests excluded) per client_id, 429s included. */
  callsByClient: Record<string, number>;
  /**
   * Requests per path as sent (decoded), every request: a path no route serves counts under `(no route)`,
   * and past 10,000 distinct paths (or a path over 512 characters) under `(other paths)`, so the map
   * stays bounded whatever is sent.
   */
  callsByPath: Record<string, number>;
  /** Authenticated API calls per operation name. */
  callsByOperation: Record<string, number>;
  /** Real-clock times (ms) of each client's authenticated API calls, in order. */
  callTimes: Record<string, number[]>;
  tokenRequests: number;
  tokenRequestsByClient: Record<string, number>;
  /** 429 answers (API and token endpoint). */
  throttled: number;
  throttledByClient: Record<string, number>;
  /** Answers per HTTP status. */
  statuses: Record<string, number>;
  faults: FaultCounts;
  /** Interactions stored through the API, per user id. */
  interactionsStored: Record<string, number>;
}

const NO_ROUTE = '(no route)';
const OTHER_PATHS = '(other paths)';
const MAX_PATHS = 10_000;
const MAX_PATH_LENGTH = 512;

const bump = (m: Record<string, number>, k: string | number) => (m[String(k)] = (m[String(k)] ?? 0) + 1);

export class StatsRecorder {
  private calls = 0;
  private readonly byClient: Record<string, number> = {};
  private readonly byPath: Record<string, number> = {};
  private readonly byOperation: Record<string, number> = {};
  private readonly times: Record<string, number[]> = {};
  private tokens = 0;
  private readonly tokensByClient: Record<string, number> = {};
  private throttled = 0;
  private readonly throttledByClient: Record<string, number> = {};
  private readonly statuses: Record<string, number> = {};

  private pathKeys = 0;

  request(path: string, routed = true): void {
    this.calls++;
    let key = routed ? path : NO_ROUTE;
    if (routed && this.byPath[key] === undefined && (key.length > MAX_PATH_LENGTH || this.pathKeys >= MAX_PATHS))
      key = OTHER_PATHS;
    if (this.byPath[key] === undefined) this.pathKeys++;
    bump(this.byPath, key);
  }

  apiCall(clientId: number, operation: string, at = Date.now()): void {
    bump(this.byClient, clientId);
    bump(this.byOperation, operation);
    (this.times[String(clientId)] ??= []).push(at);
  }

  tokenRequest(clientId: unknown): void {
    this.tokens++;
    if (typeof clientId === 'number' || typeof clientId === 'string') bump(this.tokensByClient, clientId);
  }

  answered(status: number, clientId?: unknown): void {
    bump(this.statuses, status);
    if (status === 429) {
      this.throttled++;
      if (typeof clientId === 'number' || typeof clientId === 'string') bump(this.throttledByClient, clientId);
    }
  }

  snapshot(faults: FaultCounts, interactionsStored: Record<string, number>): SandboxStats {
    const copy = <T>(v: T): T => structuredClone(v);
    return {
      calls: this.calls,
      callsByClient: copy(this.byClient),
      callsByPath: copy(this.byPath),
      callsByOperation: copy(this.byOperation),
      callTimes: copy(this.times),
      tokenRequests: this.tokens,
      tokenRequestsByClient: copy(this.tokensByClient),
      throttled: this.throttled,
      throttledByClient: copy(this.throttledByClient),
      statuses: copy(this.statuses),
      faults: { ...faults, drift: { ...faults.drift } },
      interactionsStored,
    };
  }
}

/** The most calls in any window of `windowMs` (default one minute) among sorted call times. */
export function maxCallsInWindow(times: readonly number[], windowMs = 60_000): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end] - times[start] >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
