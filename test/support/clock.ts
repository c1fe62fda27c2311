/**
 * The program's clock pinned for one in-process step. An extract given an explicit `now` stamps its
 * observations with it but finishes by the program's clock (what a close's instant is compared with), so
 * a step that stands for "a run at this instant" pins both, whatever instant PERKS_TEST_NOW moves the suite to.
 */
import { clockFrom, setClock } from '../../src/shared/clock.js';

export async function atInstant<T>(instant: string | Date, step: () => Promise<T>): Promise<T> {
  const before = setClock(clockFrom(new Date(instant)));
  try {
    return await step();
  } finally {
    setClock(before);
  }
}
