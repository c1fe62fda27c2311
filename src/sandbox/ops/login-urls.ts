/** Single-use login URLs: issued for a user, served once at GET /sso/{token}, then gone. */
import { randomBytes } from 'node:crypto';
import { LOGIN_PATH_PREFIX, USED_LOGIN_URL_STATUS } from '../choices.js';
import { SandboxError, notFound } from '../errors.js';
import type { UserRecord } from '../world/users.js';

export class LoginUrls {
  private readonly tokens = new Map<string, { userId: number; used: boolean }>();

  issue(user: UserRecord, origin: string): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { userId: user.id, used: false });
    return `${origin}${LOGIN_PATH_PREFIX}${token}`;
  }

  /** Signs the user in: returns their id the first time, 410 after, 404 for a token never issued. */
  consume(token: string): number {
    const entry = this.tokens.get(token);
    if (!entry) throw notFound();
    if (entry.used) throw new SandboxError('gone', USED_LOGIN_URL_STATUS, 'This login link has already been used.');
    entry.used = true;
    return entry.userId;
  }
}
