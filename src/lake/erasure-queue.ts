/**
 * Erasures owed: users seen anonymised upstream whose personal data older lake files may still hold.
 * The extract records them, durably and before the users snapshot that shows the change replaces the
 * one that held their data (src/extract/snapshots/user-changes.ts); the forget step clears them from every file
 * and only then takes them off. So an erasure survives a same-day rerun, a kill between landing and
 * forgetting, and a sharded run that does not forget at all: the next run that forgets finds it here.
 * `<out>/state/erasure/<group>.json`; a user is kept as ids and personal keys, never values.
 */
import { z } from 'zod';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stateRoot } from './paths.js';
import { StateStore } from './state-store.js';

export const OwedErasure = z.object({
  id: z.number().int(),
  group: z.number().int(),
  /** personalKey() of every e-mail address and name the lake held for the user. */
  keys: z.array(z.string().regex(/^[0-9a-f]{64}$/)),
  observed_at: z.string(),
});
export type OwedErasure = z.infer<typeof OwedErasure>;

const QueueFile = z.object({ owed: z.array(OwedErasure) });
const STREAM = 'erasure';

/** Adds (or merges the keys of) users owed an erasure in one group. */
export async function oweErasures(outDir: string, group: number, owed: OwedErasure[]): Promise<void> {
  if (!owed.length) return;
  const store = new StateStore(outDir);
  const current = (await store.read(STREAM, String(group), QueueFile))?.owed ?? [];
  const byId = new Map(current.map((o) => [o.id, o]));
  for (const o of owed) {
    const before = byId.get(o.id);
    byId.set(o.id, before ? { ...before, keys: [...new Set([...before.keys, ...o.keys])] } : o);
  }
  await store.write(STREAM, String(group), { owed: [...byId.values()].sort((a, b) => a.id - b.id) });
}

/** Every erasure owed, of the given groups (all when absent). */
export async function owedErasures(outDir: string, groups?: number[]): Promise<OwedErasure[]> {
  const store = new StateStore(outDir);
  let files: string[];
  try {
    files = readdirSync(join(stateRoot(outDir), STREAM)).filter((f) => /^\d+\.json$/.test(f));
  } catch {
    return [];
  }
  const out: OwedErasure[] = [];
  for (const f of files) {
    const group = Number(f.slice(0, -'.json'.length));
    if (groups && !groups.includes(group)) continue;
    out.push(...((await store.read(STREAM, String(group), QueueFile))?.owed ?? []));
  }
  return out;
}

/** Takes the users done off their groups' queues (after their data is cleared everywhere). */
export async function settleErasures(outDir: string, done: OwedErasure[]): Promise<void> {
  const store = new StateStore(outDir);
  for (const group of new Set(done.map((d) => d.group))) {
    const ids = new Set(done.filter((d) => d.group === group).map((d) => d.id));
    const current = (await store.read(STREAM, String(group), QueueFile))?.owed ?? [];
    await store.write(STREAM, String(group), { owed: current.filter((o) => !ids.has(o.id)) });
  }
}
