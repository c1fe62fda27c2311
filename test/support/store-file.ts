/**
 * A test file's store world (store-world.ts: s3rver and Redis, or Ceph RGW alone) and its sandboxes of one
 * seed, started on demand; everything stopped after the file.
 */
import { afterAll, beforeAll } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { testSandbox } from './sandbox.js';
import { startStoreWorld, type StoreWorld } from './store-world.js';

export function storeWorldForFile(
  seed: number,
  server: 's3rver' | 'rgw' = 's3rver',
): { world: () => StoreWorld; sandbox: () => Promise<Sandbox> } {
  let world: StoreWorld | undefined;
  const sandboxes: Sandbox[] = [];
  beforeAll(async () => {
    world = server === 'rgw' ? await startStoreWorld('rgw') : await startStoreWorld();
  }, 180_000);
  afterAll(async () => {
    for (const s of sandboxes) await s.close();
    await world?.stop();
  });
  return {
    world: () => world!,
    async sandbox() {
      const s = await testSandbox({ seed });
      sandboxes.push(s);
      return s;
    },
  };
}
