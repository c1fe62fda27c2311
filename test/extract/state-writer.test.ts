import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { StateStore } from '../../src/lake/index.js';
import { StateWriter } from '../../src/extract/state.js';
import { tempOut } from '../support/scratch.js';

describe('the state writer', () => {
  it('joins changes made while a write is under way into the next write, and each resolves only once its change is on disk', async () => {
    const out = tempOut('perks-state-writer-');
    const store = new StateStore(out);
    const writer = new StateWriter<{ done: number[] }>(store, 'orders', '11', { done: [] });
    const onDisk = () => JSON.parse(readFileSync(store.fileOf('orders', '11'), 'utf8')) as { done: number[] };
    const seenAtResolve: boolean[] = [];
    await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        writer.update((s) => void s.done.push(n)).then(() => seenAtResolve.push(onDisk().done.includes(n))),
      ),
    );
    expect(seenAtResolve).toHaveLength(40);
    expect(seenAtResolve.every(Boolean)).toBe(true);
    expect(onDisk().done.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, n) => n));
  });

  it('a failed write fails the changes it held; a later change writes them all', async () => {
    const out = tempOut('perks-state-writer-');
    const store = new StateStore(out);
    const writer = new StateWriter<{ done: number[]; bad?: bigint }>(store, 'orders', '12', { done: [] });
    await expect(
      writer.update((s) => {
        s.done.push(1);
        s.bad = 1n;
      }),
    ).rejects.toThrow(); // JSON cannot hold a BigInt
    await writer.update((s) => {
      delete s.bad;
      s.done.push(2);
    });
    expect(JSON.parse(readFileSync(store.fileOf('orders', '12'), 'utf8')).done).toEqual([1, 2]);
  });
});
