/**
 * The access token of one credential: requested once, reused until shortly before expiry
 * (spec, Authentication 4). Concurrent callers share one request; a 401 invalidates only the token
 * that was refused, so eight calls failing together cause one new token, not eight.
 */
import { registerSecret } from '../shared/redact.js';
import type { Token } from '../resources/auth.js';

/** Renew this long before expiry. */
const REFRESH_MARGIN_MS = 5 * 60_000;

export class TokenManager {
  private current?: { token: string; expiresAt: number };
  private inflight?: Promise<string>;

  constructor(private readonly requestToken: () => Promise<Token>) {}

  async get(): Promise<string> {
    if (this.current && Date.now() < this.current.expiresAt - REFRESH_MARGIN_MS) return this.current.token;
    return this.refresh();
  }

  /** The API refused this token: forget it, unless a newer one already replaced it. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private refresh(): Promise<string> {
    this.inflight ??= this.requestToken()
      .then((t) => {
        registerSecret(t.access_token);
        // A token shorter-lived than the margin is still used once rather than refreshed on every call.
        const lifetime = Math.max(t.expires_in * 1000, REFRESH_MARGIN_MS + 1000);
        this.current = { token: t.access_token, expiresAt: Date.now() + lifetime };
        return t.access_token;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }
}
