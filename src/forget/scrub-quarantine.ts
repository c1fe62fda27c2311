/**
 * Quarantined records are raw API records (`<out>/quarantine/<stream>/<run>.jsonl`): a line that is the
 * user's (it holds one of their emails, or their id as `id`/`user_id`) keeps its reasons but loses every
 * personal value. Values are recognised by their personal key (src/lake/personal-keys.ts). Each changed file is
 * replaced atomically, 0600 like the quarantine itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { personalKey, quarantineRoot, writeFileAtomic } from '../lake/index.js';
import type { Identities } from './identities.js';
import { PERSONAL_KEYS } from './personal-columns.js';

export async function scrubQuarantine(outDir: string, who: Identities): Promise<number> {
  const root = quarantineRoot(outDir);
  let files: string[];
  try {
    files = readdirSync(root, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.jsonl'));
  } catch {
    return 0;
  }
  const secrets = new Set(who.keys);
  const ids = new Set(who.ids);
  let scrubbed = 0;
  for (const f of files) {
    const path = join(root, f);
    let changed = false;
    const lines = readFileSync(path, 'utf8')
      .split('\n')
      .map((line) => {
        if (!line.trim()) return line;
        let entry: { record?: Record<string, unknown> };
        try {
          entry = JSON.parse(line) as { record?: Record<string, unknown> };
        } catch {
          return line; // a line torn by a crash holds nothing to parse; it is skipped by readers
        }
        if (!isTheUsers(entry, ids, secrets)) return line;
        changed = true;
        scrubbed += 1;
        return JSON.stringify(scrub(entry, secrets));
      });
    if (changed) await writeFileAtomic(path, lines.join('\n'), { mode: 0o600 });
  }
  return scrubbed;
}

function isTheUsers(entry: { record?: Record<string, unknown> }, ids: Set<number>, secrets: Set<string>): boolean {
  const r = entry.record ?? {};
  if (ids.has(Number(r.id)) && ['users', 'redemption_stats'].includes(String((entry as { stream?: string }).stream)))
    return true;
  if (ids.has(Number(r.user_id))) return true;
  return holdsSecret(entry, secrets);
}

/** Whether any string in the value is one of the user's emails (or names), by key. */
function holdsSecret(value: unknown, secrets: Set<string>): boolean {
  if (typeof value === 'string') return value.includes('@') && secrets.has(personalKey(value));
  if (Array.isArray(value)) return value.some((v) => holdsSecret(v, secrets));
  if (value && typeof value === 'object') return Object.values(value).some((v) => holdsSecret(v, secrets));
  return false;
}

/** Personal keys become null, and so does any string that is one of the user's emails or names. */
function scrub(value: unknown, secrets: Set<string>): unknown {
  if (typeof value === 'string') return secrets.has(personalKey(value)) ? null : value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, secrets));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, PERSONAL_KEYS.includes(k) && v !== null ? null : scrub(v, secrets)]),
    );
  }
  return value;
}
