/**
 * One format for the id of every kind of run: `<prefix><its start, UTC to the second>-<6 hex>`
 * (`20261122T120000Z-4d4d08` an extract, `wb-20261122T120000Z-9f0c1a` a write-back): sorted by start, told
 * apart by the random part (two runs in one second on two machines).
 */
import { randomBytes } from 'node:crypto';
import { now as clockNow } from './clock.js';

export function newRunId(prefix = '', now: Date = clockNow()): string {
  const second = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${prefix}${second}-${randomBytes(3).toString('hex')}`;
}
