import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import {
  acquireLock,
  cleanTemporaryFiles,
  lakeColumns,
  openPartitionWrite,
  runManifestPath,
  UnsafePathError,
  writeRunManifest,
  readRunManifestFile,
} from '../../src/lake/index.js';
import { Order } from '../../src/resources/index.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';
import { readStream, ROOT } from './helpers.js';
import { now } from '../../src/shared/clock.js';

const partition = { organisation_group_id: '11', order_date: '2026-11-02' };

test('after a run is killed mid-write, the next run removes its temporary files and nothing committed', async () => {
  const out = tempOut();
  const first = await openPartitionWrite({
    outDir: out,
    stream: 'orders',
    partition,
    columns: lakeColumns(Order),
    runId: 'r0',
    extractedAt: now(),
  });
  await first.append([{ order_id: 1 }]);
  const committed = (await first.commit()).path;

  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'test/lake/fixtures/killed-writer.ts'), out],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => String(d).includes('appended') && resolve());
    child.on('exit', (code) => reject(new Error(`killed-writer exited with ${code}`)));
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const leftovers = filesUnder(out).filter((f) => f.includes('.perks-tmp-'));
  expect(leftovers.length).toBeGreaterThan(0);

  const lock = await acquireLock(out);
  const removed = await cleanTemporaryFiles(out);
  expect(removed.map((p) => p.slice(out.length + 1)).sort()).toEqual(leftovers);
  expect(filesUnder(out)).toEqual(['.perks.lock', committed.slice(out.length + 1), 'runs/killed.json']);
  expect((await readStream(out, 'orders', 'order_id')).rows.map((r) => r.order_id)).toEqual(['1']);
  await lock.release();
});

test("startup hygiene leaves this process's own temporary files alone", async () => {
  const out = tempOut();
  const writer = await openPartitionWrite({
    outDir: out,
    stream: 'orders',
    partition,
    columns: lakeColumns(Order),
    runId: 'r',
    extractedAt: now(),
  });
  await writer.append([{ order_id: 1 }]);
  expect(await cleanTemporaryFiles(out)).toEqual([]);
  expect((await writer.commit()).rows).toBe(1);
});

test('a run manifest is written whole to runs/<run_id>.json in snake_case, readable, with no temporary file', async () => {
  const out = tempOut();
  const manifest = {
    runId: '20261103T040506Z-ab12',
    finishedAt: '2026-11-03T04:05:09.000Z',
    outcome: 'success',
    streams: [{ name: 'orders', rows: 3, failedGroups: [12] }],
    unknownFields: { order_versions: { promoCode: 2 } },
  };
  const path = await writeRunManifest(out, manifest);
  expect(path).toBe(runManifestPath(out, manifest.runId));
  expect(path).toBe(join(out, 'runs', '20261103T040506Z-ab12.json'));
  expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
    run_id: '20261103T040506Z-ab12',
    finished_at: '2026-11-03T04:05:09.000Z',
    outcome: 'success',
    streams: [{ name: 'orders', rows: 3, failed_groups: [12] }],
    unknown_fields: { order_versions: { promoCode: 2 } }, // names of streams and fields are data: as they are
  });
  expect(await readRunManifestFile(path)).toEqual(manifest);
  expect((await stat(path)).mode & 0o777).toBe(0o644);
  expect(await readdir(join(out, 'runs'))).toEqual(['20261103T040506Z-ab12.json']);
  await expect(writeRunManifest(out, { runId: '../escape' })).rejects.toThrow(UnsafePathError);
});
