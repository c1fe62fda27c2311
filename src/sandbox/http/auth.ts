/**
 * Client credentials and access tokens. Tokens are JWT-shaped (HS256 over a key made at start-up),
 * checked for signature, expiry and revocation. Secrets and tokens are never logged.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TokenRequest } from '../../resources/auth.js';
import { SandboxError } from '../errors.js';
import type { Principal } from '../principal.js';
import { validate } from './body.js';

export interface Credential {
  client_id: number;
  client_secret: string;
  kind: 'group' | 'organisation';
  groupIds: number[];
}

type Payload = { aud?: string; jti?: string; exp?: number };
const MAX_VERIFIED = 10_000;
const b64 = (v: Buffer | string) => Buffer.from(v).toString('base64url');
const unauthenticated = () => new SandboxError('unauthenticated', 401, 'Unauthenticated.');

export function makeSecret(): string {
  return randomBytes(30).toString('base64url');
}

export class TokenService {
  private readonly key = randomBytes(32);
  private readonly revoked = new Set<string>();
  private readonly uses = new Map<string, number>();
  private readonly verified = new Map<string, Payload>();

  constructor(
    private readonly credentials: readonly Credential[],
    private readonly lifetimeSeconds: number,
  ) {}

  /** Whether `id` is one of the credentials' client ids (as a number or its digits): nothing else is keyed or counted by it. */
  knows(id: unknown): boolean {
    if (typeof id !== 'number' && typeof id !== 'string') return false;
    const text = String(id);
    return text.length <= 20 && this.credentials.some((c) => String(c.client_id) === text);
  }

  /** The token endpoint's work after its rate limit: validate, check the secret, sign. */
  issue(raw: unknown): { token_type: string; expires_in: number; access_token: string } {
    const body = validate(TokenRequest, raw);
    const cred = this.credentials.find((c) => c.client_id === body.client_id);
    const given = Buffer.from(body.client_secret);
    if (
      !cred ||
      given.length !== Buffer.byteLength(cred.client_secret) ||
      !timingSafeEqual(given, Buffer.from(cred.client_secret))
    ) {
      throw new SandboxError('invalid_client', 401, 'Client authentication failed');
    }
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      aud: String(cred.client_id),
      jti: randomBytes(20).toString('hex'),
      iat: now,
      nbf: now,
      exp: now + this.lifetimeSeconds,
      sub: '',
      scopes: [body.scope],
    };
    const unsigned = `${b64(JSON.stringify({ typ: 'JWT', alg: 'HS256' }))}.${b64(JSON.stringify(payload))}`;
    return {
      token_type: 'Bearer',
      expires_in: this.lifetimeSeconds,
      access_token: `${unsigned}.${this.sign(unsigned)}`,
    };
  }

  /** The principal of a bearer header, or 401. */
  authenticate(header: string | null): Principal {
    const m = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\s*$/i.exec(header ?? '');
    if (!m) throw unauthenticated();
    const payload = this.verified.get(`${m[1]}.${m[2]}.${m[3]}`) ?? this.verify(m[1], m[2], m[3]);
    const cred = this.credentials.find((c) => String(c.client_id) === payload.aud);
    if (!cred || !payload.jti || this.revoked.has(payload.jti) || !payload.exp || payload.exp * 1000 <= Date.now())
      throw unauthenticated();
    return { clientId: cred.client_id, kind: cred.kind, groupIds: cred.groupIds, jti: payload.jti };
  }

  /** Counts a call served with the token; revokes it once it has served `revokeEvery` calls (fault injection); true when it did just now. */
  noteUse(principal: Principal, revokeEvery: number): boolean {
    const n = (this.uses.get(principal.jti) ?? 0) + 1;
    this.uses.set(principal.jti, n);
    if (revokeEvery > 0 && n >= revokeEvery && !this.revoked.has(principal.jti)) {
      this.revoked.add(principal.jti);
      return true;
    }
    return false;
  }

  /**
   * The payload of a token whose signature holds, or 401. Remembered: a token's signature and payload never
   * change, and only tokens this service signed get here. Expiry and revocation are checked at every call.
   */
  private verify(header: string, body: string, signature: string): Payload {
    const expected = Buffer.from(this.sign(`${header}.${body}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw unauthenticated();
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload; // signed by this service
    } catch {
      throw unauthenticated();
    }
    if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
    this.verified.set(`${header}.${body}.${signature}`, payload);
    return payload;
  }

  private sign(unsigned: string): string {
    return createHmac('sha256', this.key).update(unsigned).digest('base64url');
  }
}
