/**
 * Value checks shared by every entry point (flags, environment, build options): each is total, never
 * throws on odd input (`new Date('abcT00:00:00Z').toISOString()` throws a RangeError "Invalid time value",
 * which must never reach a person as exit 1), and answers only true or false.
 */
import { z } from 'zod';

/** A real calendar day written YYYY-MM-DD: 2026-02-30 and 2026-1-1 are not. */
export function isRealDay(text: unknown): text is string {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === text;
}

/** A real month written YYYY-MM. */
export function isRealMonth(text: unknown): text is string {
  return typeof text === 'string' && /^\d{4}-\d{2}$/.test(text) && isRealDay(`${text}-01`);
}

/** An id the platform and JavaScript both hold exactly: a whole number from 1 to 2^53 − 1 written in digits. */
export function isSafeId(text: unknown): boolean {
  const s = typeof text === 'number' ? String(text) : typeof text === 'string' ? text.trim() : '';
  return /^\d{1,16}$/.test(s) && Number.isSafeInteger(Number(s)) && Number(s) > 0;
}

/** zod: a real calendar day (the message names the form). */
export const realDay = z.string().refine(isRealDay, 'expected a real calendar date YYYY-MM-DD, e.g. 2026-11-01');
