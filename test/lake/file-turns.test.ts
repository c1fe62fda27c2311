import { describe, expect, test } from 'vitest';
import { inTurn } from '../../src/lake/index.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('turns on a lake file', () => {
  test('work on one file never overlaps, runs in the order asked, and a failure does not stop the next turn', async () => {
    const log: string[] = [];
    let inside = 0;
    let most = 0;
    const work =
      (name: string, fail = false) =>
      async () => {
        inside += 1;
        most = Math.max(most, inside);
        log.push(`start ${name}`);
        await tick();
        await tick();
        log.push(`end ${name}`);
        inside -= 1;
        if (fail) throw new Error(`${name} failed`);
        return name;
      };
    const outcomes = await Promise.allSettled([
      inTurn('/lake/month.parquet', work('a')),
      inTurn('/lake/month.parquet', work('b', true)),
      inTurn('/lake/month.parquet', work('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(most).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  test('work on different files runs side by side', async () => {
    let inside = 0;
    let most = 0;
    const work = async () => {
      inside += 1;
      most = Math.max(most, inside);
      await tick();
      inside -= 1;
    };
    await Promise.all([inTurn('/lake/a.parquet', work), inTurn('/lake/b.parquet', work)]);
    expect(most).toBe(2);
  });
});
