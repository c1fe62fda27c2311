/**
 * Where an extract's progress becomes durable beyond this machine. Each unit of work whose files depend on
 * each other (a window's history, its file and the state naming it; a batch of users and its state; a
 * snapshot and the user changes recorded before it) runs `durably`: inside the output's commit gate (a
 * store's checkpoint never snapshots half a unit) and, after it, with the bytes landed since, the progress
 * hook: an output in object storage publishes when its checkpoint interval says so, so a killed extract is
 * continued by any machine (src/shared/output-hooks.ts, the hooks the caller passes); a local output does nothing
 * more.
 */
import { committing, type OutputHooks } from '../../shared/output-hooks.js';
import type { Landing } from './landing.js';

export type Durably = <T>(work: () => Promise<T>) => Promise<T>;

export function checkpointed<L extends Landing>(
  landing: L,
  progressMade: OutputHooks['progressMade'],
): { landing: L; durably: Durably } {
  let landed = 0;
  const open: Landing['open'] = async (def, partition, mode) => {
    const write = await landing.open(def, partition, mode);
    return {
      ...write,
      async commit() {
        const result = await write.commit();
        landed += result.bytes;
        return result;
      },
    };
  };
  const durably: Durably = async (work) => {
    const result = await committing(work);
    const bytes = landed;
    landed = 0;
    await progressMade(bytes); // outside the gate: a checkpoint waits for the units in flight
    return result;
  };
  return { landing: Object.assign(Object.create(landing) as L, { open }), durably };
}
