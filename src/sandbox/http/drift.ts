/**
 * Data drift, for reliability tests (`driftRate`): some records of a listing come back changed the
 * way real APIs drift. Whether a record drifts, and how, depends only on the seed, the operation and
 * the record itself, so the same record drifts the same way on every read and the counts are exact.
 *
 * - wrongType:        a numeric field other than the key is "n/a" (the client must quarantine it)
 * - unknownField:     an extra top-level field `drift_note` (landed without it, counted as unknown)
 * - numbersAsStrings: every top-level number sent as a string, money included ("12.5")
 * - missingFields:    every top-level null left out
 * Only the last three must land unchanged.
 */
import { createRng } from '../prng.js';

export const DRIFT_KINDS = ['wrongType', 'unknownField', 'numbersAsStrings', 'missingFields'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];
export type DriftCounts = Record<DriftKind, number>;

export const emptyDriftCounts = (): DriftCounts => ({
  wrongType: 0,
  unknownField: 0,
  numbersAsStrings: 0,
  missingFields: 0,
});

/** Keys are left intact, so a quarantined record can still be told apart from the landed ones. */
const KEYS = new Set(['id', 'order_id', 'user_id', 'organisation_group_id', 'interaction_id']);

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The listing's records: `data` when it is an array, `data.credits` for user credit. */
function recordsOf(data: unknown): unknown[] | undefined {
  if (Array.isArray(data)) return data as unknown[];
  if (isRecord(data) && Array.isArray(data.credits)) return data.credits as unknown[];
  return undefined;
}

/** Drifts some records of `data` in place (it is a fresh wire object per response) and counts them. */
export function driftData(seed: number, operation: string, data: unknown, rate: number, counts: DriftCounts): void {
  const records = recordsOf(data);
  if (!records || rate <= 0) return;
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (!isRecord(record)) continue;
    const rng = createRng(seed, 'drift', operation, JSON.stringify(record));
    if (rng.next() >= rate) continue;
    const kind = chooseKind(record, rng.int(0, DRIFT_KINDS.length - 1));
    if (!kind) continue;
    records[i] = drift(record, kind);
    counts[kind] += 1;
  }
}

/** The drawn kind, or the next one that changes this record (a record without nulls cannot lose one). */
function chooseKind(record: Rec, start: number): DriftKind | undefined {
  for (let k = 0; k < DRIFT_KINDS.length; k++) {
    const kind = DRIFT_KINDS[(start + k) % DRIFT_KINDS.length];
    if (kind === 'wrongType' && !wrongTypeField(record)) continue;
    if (kind === 'missingFields' && !Object.values(record).some((v) => v === null)) continue;
    if (kind === 'numbersAsStrings' && !Object.values(record).some((v) => typeof v === 'number')) continue;
    return kind;
  }
  return undefined;
}

function wrongTypeField(record: Rec): string | undefined {
  return Object.keys(record).find((k) => !KEYS.has(k) && typeof record[k] === 'number');
}

function drift(record: Rec, kind: DriftKind): Rec {
  switch (kind) {
    case 'wrongType':
      return { ...record, [wrongTypeField(record)!]: 'n/a' };
    case 'unknownField':
      return { ...record, drift_note: 'added by the sandbox' };
    case 'numbersAsStrings':
      return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
    case 'missingFields':
      return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null));
  }
}
