import { describe, expect, test } from 'vitest';
import { clockFromEnv, parseNow } from '../../src/shared/clock.js';
import { ConfigError } from '../../src/shared/exit-codes.js';

describe('the program clock', () => {
  test('PERKS_NOW pins the calendar: an instant as given, a day as its noon UTC', () => {
    expect(parseNow('2026-12-31T23:59:30Z')?.toISOString()).toBe('2026-12-31T23:59:30.000Z');
    expect(parseNow('2026-03-29T01:30:00+01:00')?.toISOString()).toBe('2026-03-29T00:30:00.000Z');
    expect(parseNow('2026-11-22')?.toISOString()).toBe('2026-11-22T12:00:00.000Z');
    const pinned = clockFromEnv({ PERKS_NOW: '2030-01-01T00:00:00Z' }).now();
    expect(pinned.getTime() - Date.parse('2030-01-01T00:00:00Z')).toBeLessThan(1000);
  });

  test('a malformed PERKS_NOW is refused with one line naming it, an impossible day included', () => {
    for (const bad of ['tomorrow', '2026-02-30', '2026-1-1', '2026-11-22 12:00', '1700000000']) {
      expect(parseNow(bad)).toBeUndefined();
      expect(() => clockFromEnv({ PERKS_NOW: bad })).toThrow(ConfigError);
      expect(() => clockFromEnv({ PERKS_NOW: bad })).toThrow(`PERKS_NOW="${bad}" is invalid`);
    }
  });

  test('unset, it is the system clock', () => {
    const before = Date.now();
    const read = clockFromEnv({}).now().getTime();
    expect(read).toBeGreaterThanOrEqual(before);
  });
});
