/**
 * PERKS_WRITEBACK_TYPES (and `perks writeback --types`): which interaction_type each kind of event is sent
 * as. The allowed types are not shown in the spec, so each model names a default type (its kind) and this
 * maps kinds to the types configured on the platform, e.g.
 * `segment_change=engagement_segment,savings_milestone=milestone`.
 */
import { ConfigError } from '../shared/exit-codes.js';

export const TYPES_ENV = 'PERKS_WRITEBACK_TYPES';

export const TYPE_MAP_MESSAGE = 'expected kind=type pairs separated by commas, e.g. segment_change=segment_change';

const pair = /^\s*([A-Za-z0-9_.-]+)\s*=\s*([^,=]*\S)\s*$/;

/** kind → interaction_type. */
export type TypeMap = Record<string, string>;

/** Whether `text` is `kind=type` pairs (empty: no pair). */
export function isTypeMap(text: string): boolean {
  return text.trim() === '' || text.split(',').every((item) => pair.test(item));
}

/** Parses `kind=type,kind=type`; an empty or missing value maps nothing (each model's default holds). */
export function parseTypeMap(text: string | undefined): TypeMap {
  const map: TypeMap = {};
  if (text === undefined || text.trim() === '') return map;
  if (!isTypeMap(text)) throw new ConfigError(`${TYPES_ENV}=${JSON.stringify(text)} is invalid: ${TYPE_MAP_MESSAGE}`);
  for (const item of text.split(',')) {
    const m = pair.exec(item)!;
    map[m[1]] = m[2];
  }
  return map;
}
