/**
 * Issue 42: the derived files (marts, reports, docs) that BI tools read by name change only after
 * the commit that makes them true. A publish killed before its commit leaves them as the last commit had
 * them; one killed after it (its views staged under `_perks/views/`, not yet copied to their names) is
 * finished by the next command, which copies them. And a fresh working copy pulls the last build's warehouse
 * (its pieces, seed/: seed.test.ts) and marts, so its build keeps and rebuilds what the machine that built last would.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { testSandbox } from '../support/sandbox.js';
import { startStoreWorld, type S3rverWorld } from '../support/store-world.js';

let world: S3rverWorld;
let sandbox: Sandbox;
beforeAll(async () => {
  world = await startStoreWorld();
  sandbox = await testSandbox({ seed: 43 });
}, 180_000);
afterAll(async () => {
  await sandbox?.close();
  await world?.stop();
});

type Index = { generation: number; files: Record<string, { key: string; sha256: string }> };

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The views BI tools fetch by name: path → SHA-256 of the object under that name. */
async function byName(prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [key, body] of await world.objects(prefix))
    if (/^(marts|reports|docs)\//.test(key)) out.set(key, sha(body));
  return out;
}

/** The views the committed index names, with the SHA-256 of what it says they hold. */
async function committedViews(prefix: string): Promise<Map<string, string>> {
  const index = (await world.index(prefix)) as unknown as { files: Record<string, { key: string; sha256: string }> };
  return new Map(
    Object.entries(index.files)
      .filter(([p]) => /^(marts|reports|docs)\//.test(p))
      .map(([p, e]) => [p, e.sha256]),
  );
}

/** A build's summary without the lines naming files of its machine. */
const buildWork = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l && !l.includes('/'))
    .join('\n');

test('a fresh copy builds as incrementally as the machine that built last; views by name change only after the commit: a build killed before it leaves them as they were, one killed after it is finished by the next command', async () => {
  const env = (extra: Record<string, string> = {}, machine = world.machine()) =>
    world.env(sandbox, 'views', machine, extra);
  const a = world.machine();
  const first = await world.perks(['run', '--no-writeback'], env({}, a));
  expect(first.code, first.stderr).toBe(0);
  // the same models kept and rebuilt by the machine that built last and by a fresh working copy
  const original = await world.perks(['build'], env({}, a));
  expect(original.code, original.stderr).toBe(0);
  const fresh = await world.perks(['build'], env());
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(buildWork(original.stdout)).toMatch(/kept/);
  expect(buildWork(fresh.stdout)).toEqual(buildWork(original.stdout));

  const before = await byName('views');
  expect(before.get('marts/engagement_users.parquet')).toBeDefined();
  expect(before).toEqual(await committedViews('views'));

  // another segment window changes engagement_users: killed with every object uploaded, nothing committed
  const changed = ['build', '--active-days', '10'];
  const killed = await world.perks(changed, env({ PERKS_CRASH_AT: 'store-before-commit' }));
  expect(killed.signal).toBe('SIGKILL');
  expect(await byName('views'), 'BI reads the last commit’s views').toEqual(before);

  // killed after its commit, before the views reach their names: still the old ones by name
  const committed = await world.perks(changed, env({ PERKS_CRASH_AT: 'store-after-commit' }));
  expect(committed.signal).toBe('SIGKILL');
  expect(await byName('views')).toEqual(before);
  const named = await committedViews('views');
  expect(named.get('marts/engagement_users.parquet')).not.toBe(before.get('marts/engagement_users.parquet'));

  // the next command (on another machine) finishes that publish: every view by name is what the index names
  const next = await world.perks(['status'], env());
  expect(next.code, next.stderr).toBe(0);
  const finisher = await world.perks(['compact'], env());
  expect(finisher.code, finisher.stderr).toBe(0);
  expect(await byName('views')).toEqual(await committedViews('views'));
  expect((await byName('views')).get('marts/engagement_users.parquet')).toBe(
    named.get('marts/engagement_users.parquet'),
  );
  // the index names the last publish's views at their staged keys until the next commit: no other staged view left
  const last = (await world.index('views')) as unknown as Index;
  const lastKeys = new Set(Object.values(last.files).map((e) => e.key));
  expect([...lastKeys].some((k) => k.startsWith('_perks/views/'))).toBe(true);
  expect(
    [...(await world.objects('views')).keys()].filter((k) => k.startsWith('_perks/views/') && !lastKeys.has(k)),
    'no staged view left',
  ).toEqual([]);

  // the next commit (an extract: no view changes) names them by their own names and removes their staged
  // objects; a copy that holds them (the same bytes) keeps them, downloading only what changed
  const b = world.machine();
  const synced = await world.perks(['status'], env({}, b));
  expect(synced.code, synced.stderr).toBe(0);
  const again = await world.perks(['extract'], env());
  expect(again.code, again.stderr).toBe(0);
  const index = (await world.index('views')) as unknown as Index;
  expect(index.generation).toBeGreaterThan(last.generation);
  expect(await byName('views')).toEqual(await committedViews('views'));
  const staged = Object.entries(last.files).filter(([, e]) => e.key.startsWith('_perks/views/'));
  for (const [path] of staged) expect(index.files[path].key, 'by its own name').toBe(path);
  expect([...(await world.objects('views')).keys()].filter((k) => k.startsWith('_perks/views/'))).toEqual([]);
  const status = await world.perks(['status'], env({}, b));
  expect(status.code, status.stderr).toBe(0);
  const line = status.stderr.split('\n').find((l) => l.includes('"event":"store"'))!;
  const event = JSON.parse(line) as { pulled: { files: number }; bytes_down: number };
  const read = /^(lake|state|closes|runs|seed|marts)\//;
  const moved = Object.entries(index.files).filter(([p, e]) => read.test(p) && last.files[p]?.sha256 !== e.sha256);
  expect(event.pulled.files).toBe(moved.length);
  expect(event.bytes_down).toBeGreaterThan(0);
}, 300_000);
