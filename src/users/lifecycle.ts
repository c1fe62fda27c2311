/**
 * The spec's user lifecycle table as data: which state each transition starts from and where it leads.
 * A command is refused before any call when the local data shows a state the table does not allow it
 * from; when the local data shows nothing (or a status string it cannot read), the platform decides.
 */
import type { OperationName } from '../resources/operations.js';
import { LifecycleRefusal } from './errors.js';

export type UserState = 'active' | 'deactivated' | 'anonymised';

export const TRANSITIONS = {
  deactivate: { operation: 'deactivateUser', from: ['active'], to: 'deactivated' },
  restore: { operation: 'restoreUser', from: ['deactivated'], to: 'active' },
  anonymise: { operation: 'anonymiseUser', from: ['active', 'deactivated'], to: 'anonymised' },
  'make-known': { operation: 'makeKnownUser', from: ['anonymised'], to: 'active' },
} as const satisfies Record<string, { operation: OperationName; from: readonly UserState[]; to: UserState }>;
export type Transition = keyof typeof TRANSITIONS;

/**
 * The state a status string names. The spec shows only "Active"; the deactivated and anonymised strings
 * are not shown, so they are recognised by their stem (docs/assumptions.md, "User administration").
 */
export function stateOfStatus(status: string | null | undefined): UserState | undefined {
  const s = (status ?? '').trim().toLowerCase();
  if (s === 'active' || s === 'known') return 'active';
  if (/anonym/.test(s)) return 'anonymised';
  if (/deactiv|inactive|disabled|deleted/.test(s)) return 'deactivated';
  return undefined;
}

export interface LocalView {
  id: number;
  state?: UserState;
  /** Where the state was read: the latest users snapshot (with its day), or a later audited command. */
  source: string;
}

/** Throws a LifecycleRefusal when the local state is known and the table does not allow the transition. */
export function checkTransition(transition: Transition, local: LocalView | undefined): void {
  const t = TRANSITIONS[transition];
  if (!local?.state || (t.from as readonly UserState[]).includes(local.state)) return;
  const allowed = t.from.join(' or ');
  throw new LifecycleRefusal(
    `${transition} refused, nothing sent: user ${local.id} is ${local.state} (${local.source}) and the lifecycle allows ${transition} only from ${allowed}; ` +
      `refresh the local data (perks extract --streams users) or pass --force to ask the platform anyway`,
  );
}
