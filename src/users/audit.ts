/**
 * The audit log of user administration: one JSON line per state-changing call in
 * `<out>/audit/users.jsonl` (0600 in a 0700 folder): who (the API client id and the operator's login),
 * when, what (command, operation, group, user id), and the platform's answer (status, and a message with
 * any e-mail address masked). No secret, no token, no login URL, no personal value beyond the user id.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { redact } from '../shared/redact.js';
import { now } from '../shared/clock.js';
import type { UserState } from './lifecycle.js';
import { outputAt, type Output } from '../output/index.js';

export interface AuditEntry {
  at: string;
  actor: { client_id: number; operator: string };
  command: string;
  operation: string;
  group?: number;
  /** The platform's user id, when known (none for a bulk call). */
  user_id?: number;
  /** Bulk calls: how many users the call carried, and the file's lines. */
  users?: number;
  outcome: 'ok' | 'rejected' | 'failed';
  /** The platform's answer: HTTP status and, for a refusal, its message (e-mail addresses masked). */
  answer: { status?: number; message?: string; user_status?: string | null };
  /** The user's lifecycle state after an accepted transition: the local state later commands check. */
  state_after?: UserState;
  /** The users snapshot run (its _run_id) the local state rested on when the entry was made; null: no snapshot. */
  basis?: string | null;
}

export const auditPath = (outDir: string) => join(outputAt(outDir).audit, 'users.jsonl');

const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[^\s@"'<>(),;:]+/g;

/** A platform message fit for the log: secrets redacted, e-mail addresses masked, one line, bounded. */
export function auditMessage(text: string): string {
  return redact(text).replace(EMAIL, '[email]').replace(/\s+/g, ' ').slice(0, 300);
}

export function operator(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Who runs a command, where, and on which users snapshot: every entry of the command's calls says it. */
export interface AuditScope {
  readonly outDir: string;
  readonly actor: AuditEntry['actor'];
  readonly command: string;
  readonly group?: number;
  readonly basis: string | null;
}

export function auditScope(
  o: { output: Output; clientId: number; group?: number },
  command: string,
  basis: string | null,
): AuditScope {
  return {
    outDir: o.output.dir,
    actor: { client_id: o.clientId, operator: operator() },
    command,
    group: o.group,
    basis,
  };
}

/** What one call did: its operation, the user (or how many users) it carried, the platform's answer. */
export type AuditedCall = Pick<AuditEntry, 'operation' | 'user_id' | 'users' | 'outcome' | 'answer' | 'state_after'>;

/** Appends one call's entry, its fields in the order the log has always had them. */
export async function auditCall(scope: AuditScope, call: AuditedCall): Promise<void> {
  const { operation, ...outcome } = call;
  const { outDir, actor, command, group, basis } = scope;
  await appendAudit(outDir, { actor, command, operation, group, ...outcome, basis });
}

export async function appendAudit(outDir: string, entry: Omit<AuditEntry, 'at'>): Promise<void> {
  await mkdir(outputAt(outDir).audit, { recursive: true, mode: 0o700 });
  const line = JSON.stringify({
    at: now().toISOString(),
    ...entry,
    answer: { ...entry.answer, message: entry.answer.message && auditMessage(entry.answer.message) },
  });
  await appendFile(auditPath(outDir), `${line}\n`, { mode: 0o600 });
}

export async function readAudit(outDir: string): Promise<AuditEntry[]> {
  let text: string;
  try {
    text = await readFile(auditPath(outDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text.split('\n').flatMap((l) => {
    try {
      return l.trim() ? [JSON.parse(l) as AuditEntry] : [];
    } catch {
      return []; // a line cut by a crash
    }
  });
}
