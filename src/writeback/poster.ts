/**
 * Posts one interaction without ever posting it twice. The client's own retries are off for the post
 * (a blind retry after a timeout could store it twice): a refusal before the server could act (429,
 * 401) is simply retried; an answer that may have come after the server stored the row (timeout,
 * network, 5xx, cut-off body) is retried only after the user's interactions list shows it is absent.
 * A 4xx is a final rejection, recorded and not retried. When the check itself is refused for good (a
 * 4xx on the listing), the row is 'unresolved': it stays pending, the run goes on with the others.
 */
import pRetry from 'p-retry';
import { ApiError, type PerksClient } from '../api/index.js';
import { DEFAULTS } from '../config/index.js';
import { listingFailed, unresolvable } from './recover.js';
import type { WritebackRow } from './rows.js';
import { findUpstream } from './upstream.js';
import { now } from '../shared/clock.js';

export type PostOutcome =
  | { status: 'sent'; recovered: boolean }
  | { status: 'rejected'; http_status: number | null; message: string }
  | { status: 'unresolved'; message: string };

export interface PosterOptions {
  /** Client used for the post (sent with retries off: an unclear failure is checked upstream first). */
  post: PerksClient;
  /** Client used for reading the interactions list (its retries are safe: a read). */
  list: PerksClient;
  retries?: number;
  minRetryDelayMs?: number;
}

/** Failures after which the server may or may not have stored the post. */
export function ambiguous(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    (err.kind === 'timeout' || err.kind === 'network' || err.kind === 'server' || err.kind === 'parse')
  );
}

function final(err: unknown): boolean {
  return err instanceof ApiError && (err.kind === 'validation' || err.kind === 'client');
}

export async function postOnce(row: WritebackRow, opts: PosterOptions): Promise<PostOutcome> {
  // Set after an ambiguous failure: the next attempt must first look upstream.
  let mustCheck = false;
  try {
    return await pRetry(
      async (): Promise<PostOutcome> => {
        if (mustCheck) {
          const at = Date.parse(row.interaction_at);
          let found: Set<number>;
          try {
            found = await findUpstream(opts.list, { ...row, ids: [row.interaction_id], around: [at, now().getTime()] });
          } catch (err) {
            // Not knowing whether it was stored, the row stays pending: never a guess either way.
            if (unresolvable(err)) return { status: 'unresolved', message: listingFailed(err) };
            throw err; // transient (retried), refused credentials, …: stops the run as before
          }
          if (found.has(row.interaction_id)) return { status: 'sent', recovered: true };
          mustCheck = false;
        }
        try {
          await opts.post.call(
            'createInteraction',
            {
              path: { identifier: row.identifier, identifier_value: row.identifier_value },
              body: {
                interaction_id: row.interaction_id,
                interaction_type: row.interaction_type,
                interaction_at: row.interaction_at,
                interaction_details: row.interaction_details,
              },
              group: row.organisation_group_id,
            },
            { retries: 0 },
          );
          return { status: 'sent', recovered: false };
        } catch (err) {
          if (ambiguous(err)) mustCheck = true;
          throw err;
        }
      },
      {
        retries: opts.retries ?? DEFAULTS.writeback.postRetries,
        factor: 2,
        minTimeout: opts.minRetryDelayMs ?? DEFAULTS.writeback.postRetryDelayMs,
        maxTimeout: 30_000,
        randomize: true,
        shouldRetry: ({ error }) => error instanceof ApiError && error.transient,
      },
    );
  } catch (err) {
    if (final(err)) {
      const e = err as ApiError;
      return { status: 'rejected', http_status: e.status ?? null, message: e.message };
    }
    throw err;
  }
}
