/**
 * The Perks API client: every operation of the spec (src/resources/operations.ts), typed from the same
 * zod declarations the sandbox uses. Each attempt queues in the credential's limiter again
 * (`pRetry(() => limiter.schedule(send))`, guide example 6); a 401 gets exactly one new token.
 */
import pRetry, { AbortError } from 'p-retry';
import { operations, type BodyOf, type DataOf, type OperationName } from '../resources/operations.js';
import { TokenPayload, type Token } from '../resources/auth.js';
import { DEFAULTS } from '../config/index.js';
import { registerSecret } from '../shared/redact.js';
import { Counters, currentScope } from './counters.js';
import { ApiError, PauseTooLongError } from './errors.js';
import { ACTIONS } from './outcomes.js';
import { CredentialLimiter } from './rate-limiter.js';
import type { ClusterSettings } from './cluster.js';
import { TokenManager } from './token-manager.js';
import { send, type HttpResponse, type ResponseHeaders, type WireEvent, type WireHooks } from './transport.js';
import { paginatorFor } from './paginators.js';
import {
  decodeData,
  decodePage,
  requestBody,
  requestPath,
  type CallArgs,
  type ItemOf,
  type ListName,
  type Page,
} from './operation-codec.js';

export type { CallArgs, ItemOf, ListName, Page, PathParams } from './operation-codec.js';

/**
 * Attempts for a request that never reaches the API (connection refused, DNS): about 8 s of backoff.
 * A connection cut midway (reset, "other side closed") is an API that is there: it gets the full budget.
 */
const NETWORK_ATTEMPTS = 4;
/**
 * New tokens one call may ask for, each after a 401 that refused a different token: a safety net, not a
 * budget (calls share each new token). A token revoked every 5 calls with 8 in flight refuses 3 of the 8
 * retries each round, so a call can be unlucky several rounds in a row; 3 failed runs of 30 days.
 */
const NEW_TOKENS_PER_CALL = 16;
/**
 * Distinct tokens the API may refuse (401) across all calls with no call succeeding in between before
 * the client stops: a token revoked while calls are in flight is followed by successes; an API that
 * refuses every new token (a credential that may obtain tokens but not call operations) is not, and
 * asking the rate-limited token endpoint again and again would not change its mind.
 */
const REFUSED_TOKENS_WITHOUT_SUCCESS = 4;

export interface ClientOptions {
  baseUrl: string;
  clientId: number;
  clientSecret: string;
  scope?: string;
  /** Calls per minute for this credential (PERKS_RATE_LIMIT). */
  rateLimit?: number;
  /** The token is organisation level: every group-scoped call must name its group. */
  organisationLevel?: boolean;
  creditPath?: string;
  timeoutMs?: number;
  /** Attempts after the first, for transient failures. */
  retries?: number;
  /** Backoff before the first retry (grows exponentially, with jitter). */
  minRetryDelayMs?: number;
  /** A Retry-After longer than this fails fast instead of waiting. */
  maxRetryAfterMs?: number;
  runId?: string;
  /** Share one limiter between clients of the same credential (e.g. several groups). */
  limiter?: CredentialLimiter;
  /** Share the credential's budget with other processes through Redis (PERKS_REDIS_URL). */
  cluster?: ClusterSettings;
  counters?: Counters;
  maxConcurrent?: number;
  /** For tests and diagnostics: every request as it is written to its socket, and every 429 as it arrives. */
  onWire?: (event: WireEvent) => void;
}

export class PerksClient {
  readonly counters: Counters;
  readonly limiter: CredentialLimiter;
  private readonly tokens: TokenManager;
  /** Tokens refused since the last call that succeeded (see REFUSED_TOKENS_WITHOUT_SUCCESS). */
  private readonly refusedSinceSuccess = new Set<string>();
  private readonly opts: Required<
    Pick<ClientOptions, 'timeoutMs' | 'retries' | 'minRetryDelayMs' | 'maxRetryAfterMs' | 'scope' | 'creditPath'>
  > &
    ClientOptions;

  constructor(options: ClientOptions) {
    registerSecret(options.clientSecret);
    this.opts = {
      timeoutMs: 30_000,
      retries: 8,
      minRetryDelayMs: 500,
      maxRetryAfterMs: 5 * 60_000,
      scope: DEFAULTS.scope,
      creditPath: operations.userCredit.path,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    this.counters = options.counters ?? new Counters();
    this.limiter =
      options.limiter ??
      new CredentialLimiter({
        callsPerMinute: options.rateLimit ?? DEFAULTS.rateLimit,
        maxConcurrent: options.maxConcurrent,
        maxPauseMs: this.opts.maxRetryAfterMs,
        observe: options.onWire,
        cluster: options.cluster,
      });
    this.tokens = new TokenManager(() => this.requestToken());
  }

  /**
   * Calls one operation and decodes its `data` with the operation's schema. `retries: 0` sends it once
   * (a 401 still gets its one new token): for posts whose caller must check upstream before repeating.
   */
  async call<N extends OperationName>(
    name: N,
    args: CallArgs<N> = {},
    options: { retries?: number } = {},
  ): Promise<DataOf<N>> {
    const response = await this.exchange(name, args, options.retries);
    return decodeData(name, response.json);
  }

  /**
   * Pages through a listing: page 1, then as the paginator says. Records are decoded one by one, so a
   * bad record is returned as a reject (for quarantine) instead of failing the page. When the server
   * tells the last page, up to `prefetch` pages are requested ahead to keep the limiter busy.
   */
  async *paginate<N extends ListName>(
    name: N,
    args: CallArgs<N> = {},
    options: { perPage?: number; prefetch?: number } = {},
  ): AsyncGenerator<Page<ItemOf<N>>> {
    const perPage = options.perPage ?? 100;
    const fetchPage = (page: number) =>
      this.exchange(name, { ...args, body: { ...(args.body as object), page, per_page: perPage } as BodyOf<N> });
    const first = await fetchPage(1);
    const firstPage = decodePage(name, 1, first.json);
    yield firstPage;
    const paginator = paginatorFor(firstPage.pagination, perPage);
    let next = paginator.next(1, firstPage.rawCount);
    const ahead = new Map<number, Promise<HttpResponse>>();
    const prefetch = options.prefetch ?? 4;
    try {
      while (next !== undefined) {
        const last = paginator.lastPage;
        for (let p = next; last !== undefined && p <= Math.min(last, next + prefetch - 1); p++) {
          if (!ahead.has(p)) ahead.set(p, fetchPage(p));
        }
        const response = await (ahead.get(next) ?? fetchPage(next));
        ahead.delete(next);
        const page = decodePage(name, next, response.json);
        yield page;
        next = paginator.next(next, page.rawCount);
      }
    } finally {
      for (const pending of ahead.values()) pending.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (!this.opts.limiter) await this.limiter.stop();
  }

  // ---- internals ----

  private async exchange<N extends OperationName>(
    name: N,
    args: CallArgs<N>,
    retries = this.opts.retries,
  ): Promise<HttpResponse> {
    const op = operations[name];
    const body = requestBody(name, args, this.opts.organisationLevel === true);
    const url = this.opts.baseUrl + requestPath(name, args.path, this.opts.creditPath);
    // A 401 gets a new token and a retry (spec, Authentication 4). Another 401 is worth another token only
    // when it refused a different token (revoked again while calls were in flight), at most a few per call:
    // refused credentials fail at the token endpoint itself, and a token refused twice is not asked again.
    const refused = new Set<string>();
    return pRetry(async () => {
      let token = op.auth ? await this.token() : undefined;
      for (;;) {
        try {
          const response = await this.sendLimited({
            operation: name,
            method: op.method,
            url,
            body,
            token,
            timeoutMs: this.opts.timeoutMs,
          });
          this.refusedSinceSuccess.clear();
          return response;
        } catch (err) {
          if (!(
            err instanceof ApiError &&
            err.kind === 'authentication' &&
            token &&
            !refused.has(token) &&
            refused.size < NEW_TOKENS_PER_CALL
          ))
            throw err;
          this.refusedSinceSuccess.add(token);
          if (this.refusedSinceSuccess.size >= REFUSED_TOKENS_WITHOUT_SUCCESS) {
            throw new AbortError(
              new ApiError(
                'authentication',
                name,
                `the API refused ${this.refusedSinceSuccess.size} new tokens in a row (401) and no call succeeded: ` +
                  `the credential can get tokens but not call the API; check its scope and groups (PERKS_SCOPE, PERKS_GROUP_IDS)`,
                401,
              ),
            );
          }
          refused.add(token);
          this.tokens.invalidate(token);
          token = await this.token();
        }
      }
    }, this.retryOptions(retries));
  }

  /**
   * The current token. The token request retries on its own; its failure ends the call instead of being
   * retried again by the call's loop, which would ask the rate-limited token endpoint retries² times.
   */
  private token(): Promise<string> {
    return this.tokens.get().catch((err: unknown) => {
      throw new AbortError(err instanceof Error ? err : String(err));
    });
  }

  private async sendLimited(req: Parameters<typeof send>[0]): Promise<HttpResponse> {
    let waited = 0;
    const scope = currentScope(); // the limiter runs the call outside the caller's async context
    try {
      // The pause a 429 asks for is taken the moment its head arrives, and a request waits for any pause
      // until the moment it is written: nothing this client starts reaches the API before a Retry-After ends.
      const hooks: WireHooks = {
        beforeWrite: () => this.limiter.untilResumed(),
        onThrottle: (ms) => this.limiter.throttled(ms),
        observe: this.opts.onWire,
      };
      const { value, waitedMs } = await this.limiter.schedule(async () => {
        const response = await send(req, hooks).catch((err: unknown) => {
          this.counters.recordCall(req.operation, 0, 0, scope);
          throw err;
        });
        this.counters.recordCall(req.operation, response.bytes, 0, scope);
        return response;
      });
      waited = waitedMs;
      this.limiter.rateHeaders(
        numberHeader(value.headers, 'x-ratelimit-limit'),
        numberHeader(value.headers, 'x-ratelimit-remaining'),
      );
      return value;
    } catch (err) {
      const tooLong = (ms: number) =>
        new AbortError(
          new ApiError(
            'throttled',
            req.operation,
            `the API asks to wait ${Math.round(ms / 1000)} s (Retry-After), above the ${Math.round(this.opts.maxRetryAfterMs / 1000)} s cap: rerun later`,
            429,
          ),
        );
      // Another call's 429 paused the credential for longer than the cap: this one stops unsent.
      if (err instanceof PauseTooLongError) throw tooLong(err.ms);
      if (err instanceof ApiError && err.kind === 'throttled') {
        this.counters.recordThrottle();
        if (err.retryAfterMs !== undefined && err.retryAfterMs > this.opts.maxRetryAfterMs)
          throw tooLong(err.retryAfterMs);
      }
      throw err;
    } finally {
      this.counters.limiterWaitMs += waited;
    }
  }

  private retryOptions(retries = this.opts.retries) {
    return {
      retries,
      factor: 2,
      minTimeout: this.opts.minRetryDelayMs,
      maxTimeout: 30_000,
      randomize: true,
      // An API that cannot be reached at all gives up sooner than one that answers with faults.
      shouldRetry: ({ error, attemptNumber }: { error: Error; attemptNumber: number }) =>
        error instanceof ApiError &&
        ACTIONS[error.kind] === 'retry' &&
        !(error.unreachable && attemptNumber >= NETWORK_ATTEMPTS),
      onFailedAttempt: ({ error, retriesLeft }: { error: Error; retriesLeft: number }) => {
        if (error instanceof ApiError && ACTIONS[error.kind] === 'retry' && retriesLeft > 0)
          this.counters.recordRetry();
      },
    };
  }

  private async requestToken(): Promise<Token> {
    this.counters.tokenRequests += 1;
    const body = {
      client_id: this.opts.clientId,
      client_secret: this.opts.clientSecret,
      grant_type: 'client_credentials',
      scope: this.opts.scope,
    };
    const url = `${this.opts.baseUrl}${operations.token.path}`;
    const response = await pRetry(
      () => this.sendLimited({ operation: 'token', method: 'POST', url, body, timeoutMs: this.opts.timeoutMs }),
      this.retryOptions(),
    ).catch((err: unknown) => {
      if (err instanceof ApiError && err.kind === 'authentication') {
        throw new ApiError(
          'authentication',
          'token',
          'the API refused the client credentials: check PERKS_CLIENT_ID and PERKS_CLIENT_SECRET',
          401,
        );
      }
      throw err;
    });
    const parsed = TokenPayload.safeParse(response.json);
    if (!parsed.success)
      throw new ApiError('parse', 'token', 'the token response has no access_token', response.status);
    return parsed.data;
  }
}

function numberHeader(headers: ResponseHeaders, name: string): number | undefined {
  const v = headers.get(name);
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}
