/**
 * The store session of the command under way, if its output is a store. Kept apart from the session's
 * code so that commands may ask without loading the AWS SDK (a local output never loads it).
 */
import type { StoreSession } from './session.js';

let current: StoreSession | undefined;

export function currentStoreSession(): StoreSession | undefined {
  return current;
}

export function setCurrentStoreSession(session: StoreSession | undefined): void {
  current = session;
}
