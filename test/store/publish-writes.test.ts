/**
 * Issue 42: what a publish writes besides the files that changed is small and fixed. The index is written
 * once per publish (its commit), and at a command's start only when the store holds an intent (the fence
 * before finishing or rolling back a publish left unfinished). Counted at a front that sees every PUT.
 */
import { expect, test } from 'vitest';
import { startConditionalFront } from '../support/s3-conditional.js';
import { storeWorldForFile } from '../support/store-file.js';

const { world, sandbox } = storeWorldForFile(42);

test('the index is written once per publish, and at the start of a command only when it finds an intent', async () => {
  const indexWrites: string[] = [];
  const front = await startConditionalFront(world().s3.endpoint, (req) => {
    if (req.method === 'PUT' && !req.headers['x-amz-copy-source'] && req.url?.includes('/_perks/index.json'))
      indexWrites.push(req.url);
    return undefined;
  });
  try {
    const s = await sandbox();
    const env = (machine: string, extra: Record<string, string> = {}) =>
      world().env(s, 'writes', machine, { AWS_ENDPOINT_URL_S3: front.endpoint, ...extra });
    const generation = async () => (await world().index('writes'))?.generation ?? 0;
    /** Runs a command; the index writes it made, and the commits it added. */
    const counted = async (args: string[], e: Record<string, string>) => {
      indexWrites.length = 0;
      const before = await generation();
      const r = await world().perks(args, e);
      return { r, writes: indexWrites.length, commits: (await generation()) - before };
    };
    const a = world().machine();
    const first = await counted(['run', '--no-writeback'], env(a));
    expect(first.r.code, first.r.stderr).toBe(0);
    expect(first.commits).toBeGreaterThanOrEqual(2); // the extract's checkpoint, then the build
    expect(first.writes).toBe(first.commits);

    const again = await counted(['run', '--no-writeback'], env(a));
    expect(again.r.code, again.r.stderr).toBe(0);
    expect(again.commits).toBeGreaterThanOrEqual(1);
    expect(again.writes).toBe(again.commits);

    // killed before its commit: nothing committed, its intent left; the next command fences, then rolls it back
    const killed = await counted(['build', '--active-days', '10'], env(a, { PERKS_CRASH_AT: 'store-before-commit' }));
    expect(killed.r.signal).toBe('SIGKILL');
    expect(killed.commits).toBe(0);
    expect(killed.writes).toBe(0);
    const next = await counted(['build', '--active-days', '10'], env(world().machine()));
    expect(next.r.code, next.r.stderr).toBe(0);
    expect(next.commits).toBeGreaterThanOrEqual(1);
    expect(next.writes).toBe(next.commits + 1);
    const objects = await world().objects('writes');
    expect(objects.has('_perks/intent.json')).toBe(false);
    const index = (await world().index('writes'))!;
    for (const e of Object.values(index.files)) expect(objects.has(e.key), e.key).toBe(true);
  } finally {
    await front.stop();
  }
}, 400_000);
