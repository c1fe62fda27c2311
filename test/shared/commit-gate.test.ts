/**
 * The commit gate (src/shared/output-hooks.ts): a snapshot taken between commits waits for the units in flight
 * and holds new ones back until it ends, so it never sees half a unit (a window's history without its file,
 * a state without its window).
 */
import { expect, test } from 'vitest';
import { betweenCommits, committing } from '../../src/shared/output-hooks.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

test('a snapshot between commits sees every unit whole: it waits for the ones in flight and holds new ones back', async () => {
  const files = new Set<string>();
  const unit = (name: string) =>
    committing(async () => {
      files.add(`${name}/history`);
      await tick();
      files.add(`${name}/window`);
      await tick();
      files.add(`${name}/state`);
    });
  const seen: string[][] = [];
  const first = [unit('a'), unit('b')];
  await tick(); // both half done
  const snapshot = betweenCommits(async () => {
    seen.push([...files].sort());
    const late = unit('c'); // started during the snapshot: held back
    await tick();
    await tick();
    seen.push([...files].sort());
    return { late }; // wrapped: a promise returned from work would be awaited inside the snapshot
  });
  await Promise.all(first);
  const { late } = await snapshot;
  await late;
  expect(seen[0]).toEqual(['a/history', 'a/state', 'a/window', 'b/history', 'b/state', 'b/window']);
  expect(seen[1], 'no unit entered while the snapshot ran').toEqual(seen[0]);
  expect(files.has('c/state')).toBe(true);
});

test('snapshots take turns, and a unit with no snapshot waiting runs at once', async () => {
  const order: string[] = [];
  const one = betweenCommits(async () => {
    order.push('one starts');
    await tick();
    order.push('one ends');
  });
  const two = betweenCommits(() => Promise.resolve(void order.push('two')));
  await Promise.all([one, two]);
  expect(order).toEqual(['one starts', 'one ends', 'two']);
  expect(await committing(() => Promise.resolve(42))).toBe(42);
});
